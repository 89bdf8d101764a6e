#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The one test entry point (make test runs it after building):
#	tests/run.sh [FILTER]
# runs every unit test binary .output/tests/test_*, then every
# tests/integration/*.sh in name order. FILTER, a substring, keeps only the
# unit tests ("test_json/escaping") and scripts ("00_fixtures") whose names
# contain it.
#
# Tests report on stdout, one line each: "ok - ", "not ok - ", "skip - ".
# This script echoes those lines, counts them and adds failures of its own
# for what a test cannot report itself: a crash (nonzero exit without a
# "not ok" line), a timeout (TEST_TIMEOUT seconds per program, default 300),
# no results at all, processes left running after it ended (killed then),
# and under CI=true every skip. The last line is the summary; the exit
# status is 0 only if nothing failed.
#
# The scripts named in BACKGROUND start first and run alongside all the
# others; their lines are echoed and counted, and judged the same way, once
# the rest is done. Only a script whose time is a wait on the kernel (its
# CPU use near nothing) and that shares nothing with the others (a network
# namespace of its own, its own fixtures and agents, filtered to its own
# pids) belongs there: 50_time_wait waits out TIME_WAIT's fixed 60 s.
set -u
export LC_ALL=C

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TESTS_DIR=$REPO_ROOT/tests
CONNSCOPE=$REPO_ROOT/.output/connscope
FIXTURES=$REPO_ROOT/.output/fixtures
export REPO_ROOT TESTS_DIR CONNSCOPE FIXTURES
TEST_TIMEOUT=${TEST_TIMEOUT:-300}

# limit_for NAME: its time limit: TEST_TIMEOUT, or more where the test's
# file says "# test-timeout: N" (the kernels' QEMU guests, emulated).
limit_for() {
	local f=$TESTS_DIR/integration/$1.sh n

	n=$( [[ -f $f ]] && sed -n '1,30s/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$f" | head -n 1)
	echo $(( ${n:-0} > TEST_TIMEOUT ? n : TEST_TIMEOUT ))
}
BACKGROUND=(50_time_wait)
filter=${1:-}
ci=false
[[ ${CI:-} == true ]] && ci=true

cd "$REPO_ROOT" || exit 1

passed=0 failed=0 skipped=0 ran=0 results=0 bad=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/connscope-run.XXXXXX") || exit 1
child=
declare -A bg_pid bg_start

summary() {
	if ((skipped)); then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
}

# A test runs in the process group timeout(1) makes for it, out of reach of
# the terminal's ^C: pass the signal on so its own cleanup runs, wait for
# that, then stop.
interrupted() {
	local p

	[[ -n $child ]] && kill -TERM "$child" 2>/dev/null
	for p in "${bg_pid[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	failed=$((failed + 1))
	echo "not ok - run.sh: interrupted"
	summary
	exit "$1"
}
trap 'interrupted 129' HUP
trap 'interrupted 130' INT
trap 'interrupted 143' TERM
trap 'rm -rf "$tmp"' EXIT

report() {
	printf '%s\n' "$1"
}

# leftovers PGID: live processes of a finished test's process group, as
# "pid command" list. Zombies are dead already: orphans waiting for init.
leftovers() {
	ps -e -o pgid=,pid=,stat=,args= |
		awk -v g="$1" '$1 == g && $3 !~ /^Z/ { $1 = ""; $3 = ""; sub(/^ +/, ""); sub(/  +/, " "); printf "%s; ", $0 }' |
		sed 's/; $//'
}

# lingering PGID: leftovers still there after a 2 s grace period, for a
# process that was signalled but is still on its way out (a BPF agent
# detaching takes a moment).
lingering() {
	local left end now

	now=${EPOCHREALTIME//[!0-9]/}
	end=$((10#$now + 2000000))
	while :; do
		left=$(leftovers "$1")
		[[ -z $left ]] && return 0
		now=${EPOCHREALTIME//[!0-9]/}
		((10#$now < end)) || break
		sleep 0.05
	done
	echo "$left"
}

# count LINE: echo one line of test output and count it if it is a result.
count() {
	local line=$1

	printf '%s\n' "$line"
	case $line in
	"ok - "*)
		passed=$((passed + 1)) results=$((results + 1))
		;;
	"not ok - "*)
		failed=$((failed + 1)) results=$((results + 1)) bad=1
		;;
	"skip - "*)
		results=$((results + 1))
		if $ci; then
			failed=$((failed + 1)) bad=1
			line=${line#skip - }
			report "not ok - ${line%%: *}: skipped under CI=true, where the privileges are given, so the test is broken (skip reason: ${line#*: })"
		else
			skipped=$((skipped + 1))
		fi
		;;
	esac
}

# run NAME CMD...: run one test program, echo and count its results.
run() {
	local name=$1 rc start line partial='' r rfd left='' killed=0 limit
	shift
	limit=$(limit_for "$name")

	ran=$((ran + 1)) results=0 bad=0
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo" || exit 1
	start=$SECONDS
	# timeout(1) puts the test in a process group of its own (pgid = its
	# pid), signals all of it on expiry, and lets us find leftovers.
	# stdin from /dev/null: a test must not wait for the terminal.
	timeout -k 10 "$limit" "$@" </dev/null >"$tmp/fifo" &
	child=$!
	exec {rfd}<"$tmp/fifo"
	# read is a builtin, so the INT trap runs while we wait here.
	while :; do
		IFS= read -r -t 1 -u "$rfd" line
		r=$?
		if ((r == 0)); then
			count "$partial$line"
			partial=''
			continue
		fi
		partial+=$line		# read keeps what it got of a line
		((r > 128)) || break	# EOF
		# Still running, or gone while something it started holds the
		# pipe open: that case is a leak, handled below.
		kill -0 "$child" 2>/dev/null && continue
		((killed)) && break
		left=$(lingering "$child")
		[[ -n $left ]] || break
		kill -KILL -- "-$child" 2>/dev/null
		killed=1
	done
	[[ -n $partial ]] && count "$partial"
	exec {rfd}<&-
	wait "$child" 2>/dev/null
	rc=$?
	judge "$name" "$child" "$rc" $((SECONDS - start)) "$left"
	child=
	bg_collect
}

# judge NAME PID RC ELAPSED LEFT: what a finished test program's exit
# status, time and leftover processes (LEFT: those already killed) say
# about it, beyond its own result lines.
judge() {
	local name=$1 pid=$2 rc=$3 elapsed=$4 left=$5 limit

	limit=$(limit_for "$name")

	# Where make test's time goes (its budget: well under 20 minutes).
	((elapsed >= 5)) && echo "# $name took ${elapsed} s"
	# Whatever is still in its group outlived the test.
	if [[ -z $left ]]; then
		left=$(lingering "$pid")
		[[ -n $left ]] && kill -KILL -- "-$pid" 2>/dev/null
	fi
	if [[ -n $left ]]; then
		failed=$((failed + 1))
		report "not ok - $name: left processes behind (killed): $left"
	fi

	# timeout(1) exits 124 after its TERM, 137 when it had to KILL.
	if [[ $rc -eq 124 || ($rc -eq 137 && $elapsed -ge $limit) ]]; then
		failed=$((failed + 1))
		report "not ok - $name: timed out after ${limit}s (TEST_TIMEOUT or its test-timeout)"
	elif [[ $rc -ne 0 && $bad -eq 0 ]]; then
		failed=$((failed + 1))
		if [[ $rc -gt 128 ]]; then
			report "not ok - $name: killed by SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))) without reporting a failure"
		else
			report "not ok - $name: exited with status $rc without reporting a failure"
		fi
	elif [[ $rc -eq 0 && $results -eq 0 ]]; then
		failed=$((failed + 1))
		report "not ok - $name: reported no results"
	fi
}

# bg_run NAME CMD...: start one test program of BACKGROUND, its output to
# a file (a pipe could fill up while nobody reads it).
bg_run() {
	local name=$1
	shift

	ran=$((ran + 1))
	bg_start[$name]=$SECONDS
	timeout -k 10 "$(limit_for "$name")" "$@" </dev/null >"$tmp/bg.$name" &
	bg_pid[$name]=$!
}

# bg_end NAME: wait for it, then count its lines and judge it as run does.
bg_end() {
	local name=$1 pid=${bg_pid[$1]} rc line

	wait "$pid" 2>/dev/null
	rc=$?
	results=0 bad=0
	while IFS= read -r line || [[ -n $line ]]; do
		count "$line"
	done <"$tmp/bg.$name"
	judge "$name" "$pid" "$rc" $((SECONDS - bg_start[$name])) ''
	unset "bg_pid[$name]"
}

# bg_collect [all]: bg_end those that have ended (all: every one).
bg_collect() {
	local name running all=${1:-}

	running=" $(jobs -rp | tr '\n' ' ') "
	for name in "${!bg_pid[@]}"; do
		[[ $all != all && $running == *" ${bg_pid[$name]} "* ]] && continue
		bg_end "$name"
	done
}

for name in "${BACKGROUND[@]}"; do
	script=tests/integration/$name.sh
	[[ -f $script ]] || continue
	[[ -n $filter && $name != *"$filter"* ]] && continue
	bg_run "$name" bash "$script"
done

# Unit tests. Sources without a binary mean a stale or partial build, and
# would otherwise pass by not running.
for src in tests/unit/test_*.c; do
	[[ -e $src ]] || continue
	name=$(basename "$src" .c)
	[[ -n $filter && $name != *"$filter"* ]] && continue
	if [[ ! -x .output/tests/$name ]]; then
		failed=$((failed + 1)) ran=$((ran + 1))
		report "not ok - $name: not built (make unit)"
	fi
done
for bin in .output/tests/test_*; do
	[[ -f $bin && -x $bin && $bin != *.d ]] || continue
	name=$(basename "$bin")
	if [[ -z $filter || $name == *"$filter"* ]]; then
		run "$name" "$bin"
		continue
	fi
	# Only some of its tests match: ask the binary for their names.
	mapfile -t picked < <("$bin" --list 2>/dev/null | grep -F -- "$filter")
	((${#picked[@]})) && run "$name" "$bin" "${picked[@]}"
done

# The same unit tests built with ASan + UBSan (make builds them into
# .output/asan/tests): named asan:test_*, so that "asan:" picks them all.
# A sanitizer report makes the binary exit nonzero, which counts as a
# failure even when every test line said ok.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
asan_unit() {
	set -o pipefail
	"$1" | sed -u 's/^\(ok\|not ok\|skip\) - /\1 - asan:/'
}
for src in tests/unit/test_*.c; do
	[[ -e $src ]] || continue
	name=asan:$(basename "$src" .c)
	[[ -n $filter && $name != *"$filter"* ]] && continue
	bin=.output/asan/tests/${name#asan:}
	if [[ ! -x $bin ]]; then
		failed=$((failed + 1)) ran=$((ran + 1))
		report "not ok - $name: not built (make test-asan)"
		continue
	fi
	run "$name" bash -c "$(declare -f asan_unit); asan_unit '$bin'"
done

# Integration scripts: bash, from the repo root, in name order (LC_ALL=C).
for script in tests/integration/*.sh; do
	[[ -f $script ]] || continue
	name=$(basename "$script" .sh)
	[[ -n $filter && $name != *"$filter"* ]] && continue
	[[ -n ${bg_start[$name]:-} ]] && continue
	run "$name" bash "$script"
done
bg_collect all

if [[ -n $filter && $ran -eq 0 ]]; then
	failed=$((failed + 1))
	report "not ok - run.sh: nothing matches filter '$filter'"
fi

summary
((failed == 0))
