# Writes a trace that names many pools or processes, for memory.sh.
# Variables (-v NAME=VALUE): n, how many; by, "pool" (n pool ids in one
# process), "pid" (n processes of one pool each) or "none" (one pool of
# one process, n times).
#
# Each time a pool allocates one block and frees it: no problem, no leak.
BEGIN {
	print "# shiftpool trace v3"
	seq = 0
	for (i = 1; i <= n; i++) {
		pid = by == "pid" ? 1000 + i : 1000
		pool = by == "pool" ? i : 1
		ptr = sprintf("0x%x", 1048576 + (by == "none" ? 0 : i * 64))
		seq++
		printf "malloc t=%d pid=%d thread=%d pool=%d seq=%d size=48 ptr=%s src=pool\n",
			seq, pid, pid, pool, seq, ptr
		seq++
		printf "free t=%d pid=%d thread=%d pool=%d seq=%d ptr=%s src=pool\n",
			seq, pid, pid, pool, seq, ptr
	}
}
