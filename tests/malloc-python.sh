#!/bin/sh
# python3 on an allocation-heavy script (tests/malloc-heavy.py: dicts,
# lists, strings, a JSON round trip) on the C library's allocator and under
# libshiftpool-malloc.so.  PYTHONMALLOC=malloc sends every object to
# malloc() instead of Python's own small-object allocator.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

python=${PYTHON3:-}
[ -n "$python" ] || python=python3
need "$python"
# The interpreter itself, not a wrapper script that starts it (whose
# helper processes would write statistics of their own).
python=$("$python" -c 'import sys; print(sys.executable)') || exit 99
PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1
export PYTHONMALLOC PYTHONHASHSEED PYTHONDONTWRITEBYTECODE
same python "$python" "$abs_top_srcdir/tests/malloc-heavy.py" 3
finish
