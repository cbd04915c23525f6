# Writes a trace of about a million lines for large.sh.
#
# Two pools of 1000 slots each, 500000 allocations: each one first frees
# what its slot held, so every address is allocated and freed again about
# 250 times.  Every tenth round of slots goes to the fallback.  At the end
# everything is freed except slots 0-6 of pool 1: 7 leaks of pool blocks.
#
# Expected: 500000 mallocs (450000 pool, 50000 fallback), 499993 frees,
# 7 leaks (1218 bytes), no other problem; 999998 lines.  At most 900 pool
# blocks are live per pool (1800 in all); the fallback peaks are 476100
# and 860100 bytes (1336200 in all), as an independent replay computed.
BEGIN {
	n = 500000
	slots = 1000
	print "# shiftpool trace v1"
	print "init pool=1 block_size=256 block_count=1000 flags=0x0"
	print "init pool=2 block_size=4096 block_count=1000 flags=0x4"
	bs[1] = 256
	bs[2] = 4096
	for (i = 0; i < n; i++) {
		pool = 1 + i % 2
		round = int(i / 2)
		slot = round % slots
		thread = 7000 + pool * 10 + round % 3
		if ((pool, slot) in live) {
			printf "free pool=%d thread=%d ptr=%s src=%s\n", pool, thread,
				live[pool, slot], src[pool, slot]
		}
		if (round % 10 == 9) {
			s = "fallback"
			size = bs[pool] + 1 + round % 5000
			ptr = sprintf("0x55%d%08x", pool, slot * 16384)
		} else {
			s = "pool"
			size = 1 + (round * 7) % bs[pool]
			ptr = sprintf("0x7f%d%08x", pool, slot * bs[pool])
		}
		printf "malloc pool=%d thread=%d size=%d ptr=%s src=%s\n", pool, thread,
			size, ptr, s
		live[pool, slot] = ptr
		src[pool, slot] = s
	}
	for (pool = 1; pool <= 2; pool++)
		for (slot = 0; slot < slots; slot++)
			if (!(pool == 1 && slot < 7))
				printf "free pool=%d thread=%d ptr=%s src=%s\n", pool, 7000,
					live[pool, slot], src[pool, slot]
	print "destroy pool=1"
	print "destroy pool=2"
}
