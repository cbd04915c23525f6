#!/bin/sh
# examples/echo-server: 40 clients connect at once, more than the pool's
# 32 buffers, and each gets its own line back; one line is longer than a
# buffer.  Then SIGTERM: the server must exit 0 with every buffer back,
# and its counters must show the pool served 32 connections and malloc
# the rest.
#
# The clients are bash's /dev/tcp redirections; SKIP (77) without bash.
# Run by `make check`, which sets abs_top_builddir.
if [ -z "${BASH_VERSION:-}" ]; then
	command -v bash >/dev/null 2>&1 || {
		echo "echo-server: bash not found: skipped"
		exit 77
	}
	exec bash "$0" "$@"
fi
set -u

: "${abs_top_builddir:?set by make check}"
server=$abs_top_builddir/examples/echo-server
if [ ! -x "$server" ]; then
	echo "echo-server: $server is not built" >&2
	exit 99
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/echo-server-test.XXXXXX") || exit 99
pid=
watchdog=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
[ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
rm -rf "$tmp"' EXIT

failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# A bad port is refused with status 2.
timeout 60 "$server" 70000 >/dev/null 2>&1
[ $? -eq 2 ] || fail "port 70000 was not refused"

# The server is signalled itself, once: a SIGTERM from the test below, or
# the watchdog's after 120 s, then SIGKILL 30 s later if it has not exited
# (the AddressSanitizer build's leak check runs at exit, and on a loaded
# machine 5 s were once not enough).  `timeout` is not used: it passes a
# SIGTERM it gets on to its command and again to its process group, so the
# command got two, the second while the leak checker ran.
"$server" >"$tmp/out" 2>"$tmp/err" &
pid=$!
(
	nap() {
		sleep "$1" &
		naps=$!
		wait "$naps"
	}
	trap '[ -n "${naps:-}" ] && kill "$naps"; exit 0' TERM
	nap 120
	kill -TERM "$pid" 2>/dev/null || exit 0
	nap 30
	kill -KILL "$pid" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
watchdog=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' \
		"$tmp/out")
	[ -n "$port" ] && break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "echo-server did not say where it listens: $(cat "$tmp/err")" >&2
	exit 1
fi

clients=40
declare -a fds
for i in $(seq $clients); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$port" || {
		fail "client $i could not connect"
		continue
	}
	fds[i]=$fd
done
# Every client still connected: each line must come back to its sender.
for i in "${!fds[@]}"; do
	printf 'client %d says hello\n' "$i" >&"${fds[i]}"
done
for i in "${!fds[@]}"; do
	line=
	IFS= read -r -t 10 line <&"${fds[i]}"
	[ "$line" = "client $i says hello" ] || fail "client $i got '$line'"
done
# A line of 10000 bytes: read and sent back in buffer-sized pieces.
long=$(head -c 10000 /dev/zero | tr '\0' x)
printf '%s\n' "$long" >&"${fds[1]}"
line=
IFS= read -r -t 10 line <&"${fds[1]}"
[ "$line" = "$long" ] || fail "the long line came back as ${#line} bytes"
# All leave but one, which is still connected at SIGTERM.
for i in $(seq 2 $clients); do
	exec {fds[i]}>&-
done

kill -TERM "$pid"
wait "$pid"
status=$?
pid=
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
watchdog=
exec {fds[1]}>&-
[ $status -eq 0 ] || fail "the server exited with $status: $(cat "$tmp/err")"
cat "$tmp/out"
count() {
	sed -n "s/^$1: \([0-9][0-9]*\)\$/\1/p" "$tmp/out"
}
[ "$(count in_use)" = 0 ] || fail "buffers still in use at exit"
[ "$(count allocs)" = 32 ] || fail "the pool served $(count allocs), not 32"
[ "$(count fallback_allocs)" = 8 ] ||
	fail "malloc served $(count fallback_allocs), not 8"
[ "$(count fallback_frees)" = 8 ] ||
	fail "$(count fallback_frees) fallback buffers went back, not 8"

echo "echo-server: $failures failed"
[ $failures -eq 0 ]
