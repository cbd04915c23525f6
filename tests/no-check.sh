#!/bin/sh
# Stands in for tests/check_shiftpool when configure did not find Check:
# the unit tests are reported as skipped, never as passed.
echo "Check (the C unit test framework, >= 0.10) was not found by configure," >&2
echo "so the unit tests (tests/check_*.c) were not built or run." >&2
echo "Install it (Debian: apt-get install check pkg-config) and re-run configure." >&2
exit 77
