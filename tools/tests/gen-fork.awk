# Writes a trace made to cost the analyzer as much as its forks can, for
# fork-heavy.sh.  Variables (-v NAME=N): lives, pools, fans, chain, frees.
#
# Process 1 inits `pools` pools, allocates `lives` blocks in pool 1 and
# one of 100 bytes in each other pool, then forks `fans` children.  Each child frees `frees` blocks it
# inherited live (a different few each); between forks the parent frees
# one of its blocks and allocates it again, so that what it shares with
# its children changes.  Then a chain: the first link is forked by process
# 1, each next link by the link before, and every link frees `frees` more
# of the blocks (none freed twice along the chain).  No child names the
# other pools.
#
# Expected: pool 1 of process 1 leaks `lives` blocks, its other pools one
# each; in pool 1, a fan child leaks lives - frees, link i (from 0)
# lives - (i + 1) * frees; every child leaks the pools - 1 blocks of the
# pools it never names.  No other problem.
BEGIN {
	print "# shiftpool trace v2"
	t = 0
	for (p = 1; p <= pools; p++)
		printf "init t=%d pid=1 thread=1 pool=%d block_size=64 block_count=%d flags=0x0\n",
			++t, p, lives + 1
	for (i = 0; i < lives; i++)
		printf "malloc t=%d pid=1 thread=1 pool=1 size=%d ptr=0x%x src=pool\n",
			++t, 1 + i % 64, 1048576 + i * 64
	for (p = 2; p <= pools; p++)
		printf "malloc t=%d pid=1 thread=1 pool=%d size=100 ptr=0x%x src=pool\n",
			++t, p, 16777216 * p
	for (f = 0; f < fans; f++) {
		pid = 100000 + f
		printf "fork t=%d pid=%d thread=%d pool=0 parent=1\n", ++t, pid, pid
		for (j = 0; j < frees; j++) {
			b = (f * frees + j) % lives
			printf "free t=%d pid=%d thread=%d pool=1 ptr=0x%x src=pool\n",
				++t, pid, pid, 1048576 + b * 64
		}
		b = f % lives
		printf "free t=%d pid=1 thread=1 pool=1 ptr=0x%x src=pool\n",
			++t, 1048576 + b * 64
		printf "malloc t=%d pid=1 thread=1 pool=1 size=%d ptr=0x%x src=pool\n",
			++t, 1 + b % 64, 1048576 + b * 64
	}
	parent = 1
	for (c = 0; c < chain; c++) {
		pid = 200000 + c
		printf "fork t=%d pid=%d thread=%d pool=0 parent=%d\n", ++t, pid, pid,
			parent
		for (j = 0; j < frees; j++) {
			b = c * frees + j
			printf "free t=%d pid=%d thread=%d pool=1 ptr=0x%x src=pool\n",
				++t, pid, pid, 1048576 + b * 64
		}
		parent = pid
	}
}
