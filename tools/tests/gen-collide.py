#!/usr/bin/env python3
"""Writes a clean v1 trace whose pointers and sizes collide in the hash
tables of shiftpool-analyze 0.1.0, or, with --random, one of the same shape
with random pointers and sizes.

That analyzer placed a pointer of its first pool at splitmix64(ptr) and a
size at splitmix64(size), masked by a power-of-two table size.  The
finaliser is invertible, so the preimages of i << 32 all share their low
32 bits: every one lands in the same slot of any table smaller than 2^32
and linear probing makes each insertion walk all of the ones before it.

Usage: gen-collide.py [--random] COUNT
  COUNT mallocs of distinct pointers and sizes from fallback, then COUNT
  frees of them: 2 * COUNT + 2 records after the version line.
"""
import random
import sys

MASK = (1 << 64) - 1
M1 = 0xBF58476D1CE4E5B9
M2 = 0x94D049BB133111EB


def unshift_xor(x, shift):
    """The inverse of x ^= x >> shift on 64 bits."""
    y = x
    for _ in range(64 // shift + 1):
        y = x ^ (y >> shift)
    return y & MASK


def unmix64(h):
    """The x with splitmix64's finaliser of x == h."""
    x = unshift_xor(h, 31)
    x = (x * pow(M2, -1, 1 << 64)) & MASK
    x = unshift_xor(x, 27)
    x = (x * pow(M1, -1, 1 << 64)) & MASK
    return unshift_xor(x, 30)


def main(argv):
    randomize = "--random" in argv
    args = [a for a in argv if a != "--random"]
    if len(args) != 1:
        sys.exit(__doc__)
    count = int(args[0])
    rng = random.Random(12345)
    out = sys.stdout
    out.write("# shiftpool trace v1\n")
    out.write("init pool=1 block_size=64 block_count=16 flags=0x0\n")
    ptrs = []
    for i in range(1, count + 1):
        if randomize:
            ptr, size = rng.getrandbits(64) | 1, rng.getrandbits(63) | 1
        else:
            ptr, size = unmix64(i << 32), unmix64((i << 32) | 1)
        ptrs.append(ptr)
        out.write("malloc pool=1 thread=1 size=%d ptr=0x%x src=fallback\n"
                  % (size, ptr))
    for ptr in ptrs:
        out.write("free pool=1 thread=1 ptr=0x%x src=fallback\n" % ptr)
    out.write("destroy pool=1\n")


if __name__ == "__main__":
    main(sys.argv[1:])
