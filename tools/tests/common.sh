# Sourced by the shiftpool-analyze tests.  Run from the top build directory
# (as "make check" does); srcdir is the top source directory.
#
#   run STATUS ARGS...     run the analyzer, output in $out; check the status
#   expect_line LINE       $out has exactly this line
#   expect_in SECTION LINE the "pool N" or "total" section of $out has it
#   expect_file NAME       $out equals data/NAME
#   json_is EXPR VALUE     in the JSON document $out, python EXPR (on d) is
#                          VALUE, written as JSON
#   json_valid             $out is valid JSON (python3 -m json.tool)
#   probes_within TABLE MEAN MAX
#                          the "table TABLE:" line of $tmp/err (run with
#                          SHIFTPOOL_ANALYZE_TABLE_STATS set) has a mean
#                          probe length of at most MEAN and a longest of
#                          at most MAX
#   work_within TABLE N PROBES MAX
#                          the same line has at most N lookups, PROBES
#                          slots or nodes probed in all, and a longest
#                          walk of at most MAX
#   finish                 exit 1 if anything failed, else 0

: "${srcdir:=.}"
ANALYZE=${ANALYZE:-./tools/shiftpool-analyze}
DATA=$srcdir/tools/tests/data

if [ ! -x "$ANALYZE" ]; then
	echo "no $ANALYZE: run from the top build directory" >&2
	exit 99
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-analyze.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 1' 1 2 13 15
out=$tmp/out
fails=0

if command -v python3 >/dev/null 2>&1; then
	have_python=yes
else
	have_python=no
	echo "python3 not found: JSON checks skipped"
fi

fail()
{
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

run()
{
	want=$1
	shift
	echo "+ shiftpool-analyze $*"
	"$ANALYZE" "$@" >"$out" 2>"$tmp/err"
	status=$?
	if [ "$status" -ne "$want" ]; then
		fail "exit status $status, expected $want: shiftpool-analyze $*"
		cat "$tmp/err" >&2
	fi
}

expect_line()
{
	grep -Fx -- "$1" "$out" >/dev/null || fail "no line '$1'"
}

expect_in()
{
	awk -v s="$1" '
		$0 == s || index($0, s " (") == 1 { on = 1 }
		on && $0 == "" { exit }
		on' "$out" >"$tmp/section"
	grep -Fx -- "$2" "$tmp/section" >/dev/null || fail "$1: no line '$2'"
}

expect_file()
{
	diff -u "$DATA/$1" "$out" >&2 || fail "output differs from $1"
}

json_valid()
{
	[ "$have_python" = yes ] || return 0
	python3 -m json.tool "$out" >/dev/null || fail "not valid JSON"
}

json_is()
{
	[ "$have_python" = yes ] || return 0
	got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps(eval(sys.argv[2])))' "$out" "$1") || { fail "JSON: $1"; return; }
	[ "$got" = "$2" ] || fail "JSON $1 is $got, expected $2"
}

probes_within()
{
	line=$(grep "^table $1: " "$tmp/err") || { fail "no table $1 statistics"; return; }
	echo "$line" | awk -v mean="$2" -v max="$3" '{
		for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		if (v["lookups"] == 0 || v["mean"] > mean || v["max"] > max) exit 1
	}' || fail "table $1: probes too long (at most mean $2, max $3): $line"
}

work_within()
{
	line=$(grep "^table $1: " "$tmp/err") || { fail "no table $1 statistics"; return; }
	echo "$line" | awk -v n="$2" -v probes="$3" -v max="$4" '{
		for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		if (v["lookups"] > n || v["probes"] > probes || v["max"] > max) exit 1
	}' || fail "table $1: too much work (at most $2 lookups, $3 probes, longest $4): $line"
}

finish()
{
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed" >&2
		exit 1
	fi
	exit 0
}
