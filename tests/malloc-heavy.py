# An allocation-heavy Python program for tests/malloc-python.sh, which runs
# it on the C library's allocator and under libshiftpool-malloc.so (with
# PYTHONMALLOC=malloc, so every object is a malloc() of its own) and
# compares the output.  Everything printed depends only on the
# computation: no addresses, no timing, no hash order.
#
# SPDX-License-Identifier: MIT
import json
import sys


def records(n):
    for i in range(n):
        yield {
            "id": i,
            "name": "item-%d" % (i * 7919 % 100003),
            "tags": ["t%d" % (i % k) for k in (3, 5, 7, 11)],
            "score": (i * 37 % 1000) / 7.0,
            "nested": {"a": [i, i + 1, i + 2], "b": str(i) * (i % 13)},
        }


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    checks = []
    for r in range(rounds):
        data = list(records(20000))
        text = json.dumps(data, sort_keys=True)
        back = json.loads(text)
        if back != data:
            print("json round trip differs in round", r)
            return 1
        index = {}
        for item in back:
            for tag in item["tags"]:
                index.setdefault(tag, []).append(item["id"])
        words = " ".join(item["name"] for item in back).split()
        joined = "".join(sorted(set(words)))
        grown = []
        for i in range(3000):
            grown.append(bytearray(i % 700))
            grown[-1].extend(b"x" * (i % 50))
        checks.append(
            (
                len(text),
                sum(len(v) for v in index.values()),
                len(joined),
                sum(len(b) for b in grown),
                sorted(index)[:5],
            )
        )
        del data, back, index, words, grown
    for c in checks:
        print(c)
    print("ok", rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
