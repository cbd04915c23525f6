#!/bin/sh
# libshiftpool-malloc.so exports exactly the malloc family: nothing of
# the pool library compiled into it, nothing missing.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

expected="aligned_alloc calloc free malloc malloc_trim malloc_usable_size memalign
posix_memalign pvalloc realloc reallocarray valloc"
# Absolute symbols (type A) are version nodes, not functions.
actual=$(${NM:-nm} -D --defined-only "$preload" |
	awk 'NF >= 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u)
if [ "$(echo $actual)" != "$(echo $expected)" ]; then
	echo "FAIL: $preload exports:"
	echo "$actual"
	echo "expected:"
	echo "$expected"
	exit 1
fi
echo "ok: exports exactly $(echo $expected)"
