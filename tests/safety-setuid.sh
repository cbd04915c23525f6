#!/bin/sh
# A set-user-ID program ignores SHIFTPOOL_TRACE and SHIFTPOOL_DEBUG: an
# unprivileged user who runs a set-user-ID-root program that uses the
# library must not make it create, or append to, a file only root may
# write, nor change how it allocates.
#
# As root, copies tests/safety-setuid-helper (which makes a pool, so the
# trace would be opened) into a temporary directory, set-user-ID root, and
# runs the copy as user and group 65534 (setpriv) with SHIFTPOOL_TRACE
# naming files in a directory only root may enter, one that does not exist
# and one that does, and SHIFTPOOL_DEBUG=fail-fallback=1.  The new file
# must not appear, the old one must not change, and the fallback must
# work.  The same program run normally, by root, with the same
# environment, must create the trace and fail the fallback: so the
# variables are really read, and the test can fail.
#
# SKIP (77) when not run as root, without setpriv, or when the temporary
# directory does not honour the set-user-ID bit (mounted nosuid, or a
# no_new_privs sandbox).
#
# SPDX-License-Identifier: MIT

: "${abs_top_builddir:=$(pwd)}"
helper=$abs_top_builddir/tests/safety-setuid-helper
nobody=65534
fails=0

skip()
{
	echo "SKIP: $*"
	exit 77
}

fail()
{
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

[ "$(id -u)" -eq 0 ] || skip "not root: cannot make a set-user-ID-root program"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed"
if [ ! -x "$helper" ]; then
	echo "ERROR: $helper not built" >&2
	exit 99
fi
if [ "$(head -c 2 "$helper")" = "#!" ]; then
	echo "ERROR: $helper is a libtool wrapper, not the program" >&2
	exit 99
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/safety-setuid.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT PIPE TERM
chmod 755 "$tmp" || exit 99
if command -v findmnt >/dev/null 2>&1 &&
	findmnt -n -o OPTIONS -T "$tmp" | tr , '\n' | grep -qx nosuid; then
	skip "$tmp is on a file system mounted nosuid"
fi

cp "$helper" "$tmp/helper" || exit 99
chown 0:0 "$tmp/helper" && chmod 4755 "$tmp/helper" || exit 99
mkdir "$tmp/root-only" && chmod 700 "$tmp/root-only" || exit 99
echo "root's own line" >"$tmp/root-only/existing" || exit 99
chmod 600 "$tmp/root-only/existing" || exit 99

# Only the settings given below apply.
unset SHIFTPOOL_DEBUG SHIFTPOOL_TRACE

# run_as_nobody TRACE: the set-user-ID copy, by user 65534; its output in
# $tmp/out.
run_as_nobody()
{
	SHIFTPOOL_TRACE=$1 SHIFTPOOL_DEBUG=fail-fallback=1 \
		setpriv --reuid=$nobody --regid=$nobody --clear-groups \
		"$tmp/helper" >"$tmp/out" 2>&1
}

run_as_nobody "$tmp/root-only/new"
rc=$?
cat "$tmp/out"
grep -qx "ruid=$nobody euid=0" "$tmp/out" ||
	skip "the set-user-ID bit is not honoured here (nosuid or no_new_privs)"
[ "$rc" -eq 0 ] || fail "the set-user-ID program exited with status $rc"
if [ -e "$tmp/root-only/new" ]; then
	fail "a set-user-ID program run by user $nobody created SHIFTPOOL_TRACE=$tmp/root-only/new"
	sed 's/^/  | /' "$tmp/root-only/new" >&2
fi
grep -qx "fallback=ok" "$tmp/out" ||
	fail "a set-user-ID program obeyed SHIFTPOOL_DEBUG=fail-fallback=1"

run_as_nobody "$tmp/root-only/existing"
cat "$tmp/out"
if [ "$(cat "$tmp/root-only/existing")" != "root's own line" ]; then
	fail "a set-user-ID program run by user $nobody appended to SHIFTPOOL_TRACE=$tmp/root-only/existing"
	sed 's/^/  | /' "$tmp/root-only/existing" >&2
fi

# The control: the same program, not set-user-ID, obeys both.
SHIFTPOOL_TRACE=$tmp/root-only/plain SHIFTPOOL_DEBUG=fail-fallback=1 \
	"$helper" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || fail "the program, run normally, exited with status $rc"
grep -q '^# shiftpool trace' "$tmp/root-only/plain" 2>/dev/null ||
	fail "the program, run normally, wrote no trace to $tmp/root-only/plain"
grep -qx "fallback=failed" "$tmp/out" ||
	fail "the program, run normally, ignored SHIFTPOOL_DEBUG=fail-fallback=1"

if [ "$fails" -ne 0 ]; then
	echo "safety-setuid: $fails failure(s)" >&2
	exit 1
fi
echo "safety-setuid: all checks passed"
exit 0
