#!/bin/sh
# tests/malloc-threads (threads freeing each other's blocks, generations of
# threads, fork) on the C library's allocator and under
# libshiftpool-malloc.so, in the default mode and in the locked one.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

same threads "$abs_top_builddir/tests/malloc-threads"
SHIFTPOOL_MALLOC_TEST=mode=locked
same threads-locked "$abs_top_builddir/tests/malloc-threads"
finish
