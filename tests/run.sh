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
# others, and so does LANE in a full run (no FILTER), its scripts one
# after another; their lines are echoed and counted, and judged the same
# way, as each one ends. Only a script whose time is mostly waiting, and
# that shares nothing with the others, belongs there: a network namespace
# or filtered pids of its own, no fixed host port, no host sysctl, no
# process a --comm test follows by a name only it uses (gtlsclient,
# redis-benchmark, pgbench: so no QUIC test), counts asserted, not timings.
# 50_time_wait waits out TIME_WAIT's fixed 60 s. LANE's scripts used under
# 0.7 of a core in the foreground (the machine's /proc/stat over each
# one's time, fresh-clone CI at 1b68042: 97_readme_recipes 0.18 of 40 s,
# 95_doctor 0.67 of 47 s, 70_fdleak 0.17 of 22 s, 93_exporter_hardening
# 0.53 of 25 s, 99_run 0.46 of 17 s, 52_tw_replaced_unseen 0.36 of 15 s,
# 49_container_prefix 0.31 of 9 s; the foreground's mean was 0.87). A
# script that wants the machine to itself (--all agents asserting exact
# counts, one --all slot for the busiest process, the kernel guests) says
# "# quiet: yes" in its first 30 lines: every background script has ended
# before it starts.
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
LANE=(97_readme_recipes 95_doctor 70_fdleak 93_exporter_hardening 99_run
	52_tw_replaced_unseen 49_container_prefix)

# quiet NAME: the script says "# quiet: yes" (see above).
quiet() {
	local f=$TESTS_DIR/integration/$1.sh

	[[ -f $f ]] && sed -n '1,30p' "$f" | grep -qx '# quiet: yes'
}
filter=${1:-}
ci=false
[[ ${CI:-} == true ]] && ci=true

cd "$REPO_ROOT" || exit 1

passed=0 failed=0 skipped=0 ran=0 results=0 bad=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/connscope-run.XXXXXX") || exit 1
child=
declare -A bg_pid bg_start
bg_order=()

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

# judge NAME PID RC ELAPSED LEFT [CHECKED]: what a finished test program's
# exit status, time and leftover processes (LEFT: those already killed;
# CHECKED: looked for already, LEFT is all there were) say about it,
# beyond its own result lines.
judge() {
	local name=$1 pid=$2 rc=$3 elapsed=$4 left=$5 checked=${6:-} limit

	limit=$(limit_for "$name")

	# Where make test's time goes (its budget: well under 20 minutes).
	((elapsed >= 5)) && echo "# $name took ${elapsed} s"
	# Whatever is still in its group outlived the test.
	if [[ -z $left && -z $checked ]]; then
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

# bg_lane NAME...: programs in a background subshell, one after another:
# each under timeout(1) (a process group of its own, as run makes), its
# output to a file (a pipe could fill up while nobody reads it); its
# leftovers looked for and killed at once, as run does (before the next
# one starts, and while the group's number is still its own), to
# NAME.left; then "PID RC ELAPSED" to NAME.end. A TERM (run.sh
# interrupted) goes on to the program running, whose own cleanup runs.
bg_lane() {
	local name pid= rc start left
	trap '[[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null; wait; exit 143' TERM
	trap '' INT HUP
	for name; do
		start=$SECONDS
		timeout -k 10 "$(limit_for "$name")" bash "tests/integration/$name.sh" \
			</dev/null >"$tmp/bg.$name" &
		pid=$!
		wait "$pid"
		rc=$?
		left=$(lingering "$pid")
		[[ -n $left ]] && kill -KILL -- "-$pid" 2>/dev/null
		printf '%s' "$left" >"$tmp/bg.$name.left"
		echo "$pid $rc $((SECONDS - start))" >"$tmp/bg.$name.tmp"
		mv "$tmp/bg.$name.tmp" "$tmp/bg.$name.end"
		pid=
	done
}

# bg_run NAME...: start a lane.
bg_run() {
	local name

	for name; do
		ran=$((ran + 1))
		bg_start[$name]=$SECONDS
		bg_order+=("$name")
	done
	bg_lane "$@" &
	bg_pid[$1]=$!
}

# bg_end NAME: count its lines and judge it as run does.
bg_end() {
	local name=$1 pid rc elapsed line

	results=0 bad=0
	if ! read -r pid rc elapsed <"$tmp/bg.$name.end" 2>/dev/null; then
		failed=$((failed + 1))
		report "not ok - $name: did not run to its end in its BACKGROUND lane"
		return
	fi
	while IFS= read -r line || [[ -n $line ]]; do
		count "$line"
	done <"$tmp/bg.$name"
	judge "$name" "$pid" "$rc" "$elapsed" "$(cat "$tmp/bg.$name.left")" checked
}

# bg_collect [all]: bg_end those that have ended (all: wait for every lane
# first), in BACKGROUND's order.
bg_collect() {
	local name p left=()

	if [[ ${1:-} == all ]]; then
		for p in "${bg_pid[@]}"; do
			wait "$p" 2>/dev/null
		done
		bg_pid=()
	fi
	for name in "${bg_order[@]}"; do
		if [[ ${1:-} == all || -e $tmp/bg.$name.end ]]; then
			bg_end "$name"
		else
			left+=("$name")
		fi
	done
	bg_order=("${left[@]}")
}

for name in "${BACKGROUND[@]}"; do
	[[ -f tests/integration/$name.sh ]] || continue
	[[ -n $filter && $name != *"$filter"* ]] && continue
	bg_run "$name"
done
# With a FILTER, LANE's scripts run in the foreground: the lane pays off in
# a full run, and a filter's few may be ones that want a quiet machine.
if [[ -z $filter ]]; then
	names=()
	for name in "${LANE[@]}"; do
		[[ -f tests/integration/$name.sh ]] && names+=("$name")
	done
	((${#names[@]})) && bg_run "${names[@]}"
fi

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
	quiet "$name" && bg_collect all
	run "$name" bash "$script"
done
bg_collect all

if [[ -n $filter && $ran -eq 0 ]]; then
	failed=$((failed + 1))
	report "not ok - run.sh: nothing matches filter '$filter'"
fi

summary
((failed == 0))
