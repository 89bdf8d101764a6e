#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# bcc's [interval [count]] on attach and fdleak, and the live tables'
# TIME column: `attach -p PID 1 3` prints exactly 3 rows a target, their
# times one interval apart, never a time twice and none skipped (attach
# printed its last row's time twice: the end's row came in the same second
# as the last tick's; fdleak repeated a second and skipped one under load).
# Sub-second intervals show MM:SS.d (there a loaded machine may drop a tick
# that runs a whole interval late: the next label is then two intervals on,
# still never one seen before). The loaded machine CI runs on is the
# load: the labels come from the schedule, not from when a row is printed.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
fx_start t server || { fail start tcpfix; exit 1; }
P=$FX_PID_t

# tenths LABEL: HH:MM:SS, or MM:SS.d for sub-second intervals, as tenths
# of a second within the hour.
tenths() {
	local a b c
	IFS=':' read -r a b c <<<"$1"
	if [[ -n $c ]]; then
		echo $(((10#$b * 60 + 10#$c) * 10))
	else
		echo $(((10#$a * 60 + 10#${b%.*}) * 10 + ${b#*.}))
	fi
}

# check NAME FILE ROWS STEP [MIN]: ROWS rows of pid P, each STEP tenths
# after the one before (the hour's wrap allowed). With MIN, a loaded
# machine may have dropped ticks (a tick that runs later than a whole
# interval is not run twice): MIN to ROWS rows, each a whole number of
# intervals after the one before, never the same time twice.
check() {
	local name=$1 f=$2 want=$3 step=$4 min=${5:-} prev='' t d n=0 bad=''
	while read -r label _; do
		t=$(tenths "$label")
		d=$(( (t - prev + 36000) % 36000 ))
		if [[ -n $prev ]] && { [[ -z $min ]] && ((d != step)) || ((d == 0 || d % step)); }; then
			bad="$bad $label"
		fi
		prev=$t
		n=$((n + 1))
	done < <(grep -E "^([0-9]{2}:[0-9]{2}:[0-9]{2}|[0-9]{2}:[0-9]{2}\.[0-9]) +$P " "$f")
	if [[ -n $min ]]; then
		((n >= min && n <= want)) && ok "$name/rows" || fail "$name/rows" "$n rows, want $min..$want"
	else
		assert_eq "$n" "$want" "$name/rows"
	fi
	assert_eq "${bad# }" "" "$name/whole_intervals_apart"
}

# These four runs are agents of their own on the same idle target, each
# labelling from its own schedule: run side by side (the late ticks below
# one at a time, as they stop and time their agent).
"$CONNSCOPE" attach -p "$P" 1 3 >"$TMP/a.out" 2>"$TMP/a.err" &
A=$!
"$CONNSCOPE" attach -p "$P" 0.5 4 >"$TMP/h.out" 2>"$TMP/h.err" &
H=$!
"$CONNSCOPE" fdleak -p "$P" 1 3 >"$TMP/f.out" 2>"$TMP/f.err" &
F=$!
# -j: no live rows, the duration is interval x count.
"$CONNSCOPE" attach -p "$P" 0.5 2 -j >"$TMP/j.out" 2>"$TMP/j.err" &
JP=$!
wait "$A"
assert_eq "$?" 0 attach/exit_status
check attach "$TMP/a.out" 3 10
wait "$H"
assert_eq "$?" 0 attach_half/exit_status
check attach_half "$TMP/h.out" 4 5 2
wait "$F"
assert_eq "$?" 0 fdleak/exit_status
check fdleak "$TMP/f.out" 3 10
wait "$JP"
# The report says the window the count made.
assert_eq "$(grep -c '^connscope fdleak: 3\.[0-9] s (duration), interval 1 s' "$TMP/f.out")" 1 fdleak/window
# A tick that runs late by more than half an interval (the agent held off
# the CPU under load; here stopped, SIGSTOP, across its due time) is still
# labelled with its own interval: a label from the time the tick ran
# said the next interval's time, and every later row stayed one ahead
# (rows 1, 3, 4 of `2.5 3`, the last past the run's end). Interval 2.5 s
# (labels in tenths, so the test knows when each tick is due): stopped
# 0.2 s before the second tick is due until 1.75 s after it (0.7 of an
# interval late: over half, under a whole, with 0.5 s to spare each way).
# late NAME COMMAND...: the command runs `-p P 2.5 3` with a late second tick.
LATE_PID=
late_reap() {
	[[ -n $LATE_PID ]] || return 0
	kill -CONT "$LATE_PID" 2>/dev/null
	kill -KILL "$LATE_PID" 2>/dev/null
	wait "$LATE_PID" 2>/dev/null
	LATE_PID=
}
on_exit late_reap
late() {
	local name=$1 out=$TMP/late_$1.out pid first due now d
	shift
	"$@" -p "$P" 2.5 3 >"$out" 2>"$TMP/late_$name.err" &
	pid=$!
	LATE_PID=$pid
	# A bound, not a wait: start-up plus one interval, on a machine
	# loaded enough to make the agent's start take many seconds.
	wait_for "grep -Eq '^[0-9]{2}:[0-9]{2}\.[0-9] +$P ' '$out'" 60 ||
		{ fail "$name/first_row" "no row: $(cat "$TMP/late_$name.err")"; late_reap; return; }
	first=$(grep -Eo "^[0-9]{2}:[0-9]{2}\.[0-9]" "$out" | head -n 1)
	# Tenths of a second within the hour: when the second tick is due, now.
	due=$(( ($(tenths "$first") + 25) % 36000 ))
	now=$(date +%M:%S.%N)
	now=$(( (10#${now%%:*} * 60 + 10#$(cut -c4-5 <<<"$now")) * 10 + 10#$(cut -c7 <<<"$now") ))
	d=$(( (due - now + 36000) % 36000 ))
	# The first row is printed at once when its tick runs: 2.5 s before
	# the next is due, less what the tick took (labels are rounded and
	# now truncated to tenths: up to 0.15 s more).
	if ((d < 5 || d > 27)); then
		fail "$name/setup" "first row $first, now ${now} tenths, second tick due in $d tenths"
		late_reap
		return
	fi
	sleep "$(( (d - 2) / 10 )).$(( (d - 2) % 10 ))"
	kill -STOP "$pid"
	sleep 1.95
	kill -CONT "$pid"
	wait "$pid"
	assert_eq "$?" 0 "$name/exit_status"
	LATE_PID=
	check "$name" "$out" 3 25
}
late fdleak_late_tick "$CONNSCOPE" fdleak
late attach_late_tick "$CONNSCOPE" attach
assert_eq "$(jqn '.run.duration_s' "$TMP/j.out")" 1 attach_json/duration
fx_stop t
