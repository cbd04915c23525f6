#!/bin/sh
# tests/malloc-api on the C library's allocator (the checks hold there
# too), preloaded with libshiftpool-malloc.so, and linked with it
# (tests/malloc-linked), the last two also checking that the set serves
# them.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

api=$abs_top_builddir/tests/malloc-api
linked=$abs_top_builddir/tests/malloc-linked

status=0
"$api" || status=1
LD_PRELOAD=$preload "$api" set || status=1
SHIFTPOOL_MALLOC=mode=locked LD_PRELOAD=$preload "$api" set || status=1
"$linked" set || status=1
exit $status
