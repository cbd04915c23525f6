# Shared by the tests that run bench/httpd (its own, and the curl-pool
# example's, which downloads from it): count checks, make the scratch
# directory, start bench/httpd on a free loopback port, stop it, and read
# its closing report and the programs' JSON reports.  Sourced, not run.
#
# The caller sets tmp (a scratch directory it removes) and may call
# httpd_stop from an EXIT trap: every wait here is bounded, and the server
# runs under timeout(1) so that even a killed test leaves no server behind.

httpd=$abs_top_builddir/bench/httpd
# The longest a server may live, whatever happens to the test.
HTTPD_LIFETIME=${HTTPD_LIFETIME:-300}
# How long the test waits for the server to say where it listens, and
# to exit after SIGTERM: bounds for a hang, not for speed.  A loaded
# machine running a sanitizer build (whose leak check runs at exit) can
# take many seconds for either.
HTTPD_WAIT=${HTTPD_WAIT:-60}

HTTPD_PID=
HTTPD_PORT=
HTTPD_OUT=
HTTPD_ERR=

# sleep_tenth: a tenth of a second where sleep takes fractions, else one.
sleep_tenth() {
	sleep 0.1 2>/dev/null || sleep 1
}

# httpd_start NAME [httpd options...]: starts the server, sets HTTPD_PID,
# HTTPD_PORT, HTTPD_OUT (its stdout) and HTTPD_ERR.  Returns 1 when it
# does not say where it listens within HTTPD_WAIT seconds.  timeout(1)
# forwards the SIGTERM of httpd_stop and then kills after its -k delay,
# so that delay is longer than httpd_stop's own wait.
httpd_start() {
	name=$1
	shift
	HTTPD_OUT=$tmp/httpd-$name.out
	HTTPD_ERR=$tmp/httpd-$name.err
	: >"$HTTPD_OUT"
	timeout -k $((HTTPD_WAIT + 30)) "$HTTPD_LIFETIME" "$httpd" --port=0 "$@" \
		>"$HTTPD_OUT" 2>"$HTTPD_ERR" &
	HTTPD_PID=$!
	HTTPD_PORT=
	tries=0
	while [ $tries -lt $((HTTPD_WAIT * 10)) ]; do
		HTTPD_PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' \
			"$HTTPD_OUT")
		[ -n "$HTTPD_PORT" ] && return 0
		kill -0 "$HTTPD_PID" 2>/dev/null || break
		sleep_tenth
		tries=$((tries + 1))
	done
	echo "httpd $*: no 'listening on' line" >&2
	cat "$HTTPD_ERR" >&2
	httpd_kill
	return 1
}

# httpd_kill: ends the server at once (for failures and traps).
httpd_kill() {
	if [ -n "$HTTPD_PID" ]; then
		kill -KILL "$HTTPD_PID" 2>/dev/null
		wait "$HTTPD_PID" 2>/dev/null
		HTTPD_PID=
	fi
}

# httpd_where: what a server that does not exit is doing, for the log:
# whether it printed its report (a hang at exit rather than in the
# shutdown), and every thread's stack when gdb is installed.  The server
# is the child of timeout(1), whose pid HTTPD_PID is.
httpd_where() {
	if grep -q '^{' "$HTTPD_OUT" 2>/dev/null; then
		echo "httpd printed its report: it hangs at exit" >&2
	else
		echo "httpd printed no report: it hangs in its shutdown" >&2
	fi
	command -v gdb >/dev/null 2>&1 || return 0
	for pid in $(sed -n 's/^\([0-9]*\) (.*) . \([0-9]*\) .*/\1 \2/p' \
		/proc/[0-9]*/stat 2>/dev/null | awk -v p="$HTTPD_PID" '$2 == p { print $1 }'); do
		timeout 60 gdb -batch -nx -p "$pid" \
			-ex 'thread apply all bt' </dev/null 2>&1 |
			grep -E '^(Thread|#)' >&2
	done
}

# httpd_stop: SIGTERM, then waits up to HTTPD_WAIT seconds for the exit.  Sets
# HTTPD_STATUS to the exit status and HTTPD_REPORT to the JSON line.
httpd_stop() {
	HTTPD_STATUS=
	HTTPD_REPORT=
	[ -n "$HTTPD_PID" ] || return 1
	kill -TERM "$HTTPD_PID" 2>/dev/null
	tries=0
	while kill -0 "$HTTPD_PID" 2>/dev/null &&
		[ $tries -lt $((HTTPD_WAIT * 10)) ]; do
		sleep_tenth
		tries=$((tries + 1))
	done
	if kill -0 "$HTTPD_PID" 2>/dev/null; then
		echo "httpd did not exit within $HTTPD_WAIT s of SIGTERM" >&2
		httpd_where
		httpd_kill
		HTTPD_STATUS=124
		return 1
	fi
	wait "$HTTPD_PID"
	HTTPD_STATUS=$?
	HTTPD_PID=
	HTTPD_REPORT=$(grep '^{' "$HTTPD_OUT" | tail -n 1)
	return 0
}

# json_number KEY JSON: the number stored under "KEY" at the top level of
# the one-line report (its first occurrence: the pool's own keys follow).
json_number() {
	printf '%s\n' "$2" | tr ',{' '\n\n' |
		sed -n "s/^\"$1\":\([0-9][0-9]*\)}*\$/\1/p" | head -n 1
}

# json_pool_number KEY JSON: the number under "KEY" inside "pool":{...}.
json_pool_number() {
	printf '%s\n' "$2" | sed -n 's/.*"pool":{\([^}]*\)}.*/\1/p' |
		tr ',' '\n' | sed -n "s/^\"$1\":\([0-9][0-9]*\)\$/\1/p"
}

# report_balanced REPORT LIVE_KEY: status 0 when the report counts some
# allocations and as many frees, LIVE_KEY (its count still allocated) is 0,
# and, if it has a "pool" section, the pool has no block in use and as
# many fallback frees as fallback allocations.  Sets allocs and frees.
report_balanced() {
	allocs=$(json_number allocs "$1")
	frees=$(json_number frees "$1")
	[ -n "$allocs" ] && [ "$allocs" -gt 0 ] && [ "$allocs" = "$frees" ] &&
		[ "$(json_number "$2" "$1")" = 0 ] || return 1
	case $1 in
	*'"pool":{'*)
		[ "$(json_pool_number in_use "$1")" = 0 ] &&
			[ "$(json_pool_number fallback_allocs "$1")" = \
				"$(json_pool_number fallback_frees "$1")" ]
		;;
	esac
}

# ---------------------------------------------------------------- checks

failures=0
passes=0

# check NAME STATUS MESSAGE: counts one check, passed when STATUS is 0,
# else printed as "FAIL NAME: MESSAGE".
check() {
	if [ "$2" -eq 0 ]; then
		passes=$((passes + 1))
	else
		failures=$((failures + 1))
		echo "FAIL $1: $3"
	fi
}

# check_summary: prints the counts; status 1 if a check failed.
check_summary() {
	echo "$passes passed, $failures failed"
	[ $failures -eq 0 ]
}

# require_built TEST PROGRAM...: exits 99 (a hard error) unless every
# PROGRAM is built.
require_built() {
	test_name=$1
	shift
	for program in "$@"; do
		if [ ! -x "$program" ]; then
			echo "$test_name: $program is not built" >&2
			exit 99
		fi
	done
}

# scratch_dir TEST: sets tmp to a new directory, removed on exit together
# with any server still running.
scratch_dir() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1-test.XXXXXX") || exit 99
	trap 'httpd_kill; rm -rf "$tmp"' EXIT
	trap 'exit 1' INT TERM HUP
}
