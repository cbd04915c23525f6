#!/bin/sh
# A C++ program (tests/malloc-cxx.cc) on the C library's allocator and
# under libshiftpool-malloc.so.  Built here with the C++ compiler ($CXX,
# else c++ or g++); skipped without one.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

cxx=${CXX:-}
if [ -z "$cxx" ]; then
	for candidate in c++ g++ clang++; do
		if command -v "$candidate" >/dev/null 2>&1; then
			cxx=$candidate
			break
		fi
	done
fi
if [ -z "$cxx" ]; then
	echo "no C++ compiler; skipped"
	exit 77
fi
if ! $cxx -std=c++17 -O2 -o "$scratch/malloc-cxx" \
	"$abs_top_srcdir/tests/malloc-cxx.cc" 2>"$scratch/build.log"; then
	cat "$scratch/build.log"
	echo "$cxx cannot build tests/malloc-cxx.cc"
	exit 99
fi
same cxx "$scratch/malloc-cxx"
finish
