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

"$CONNSCOPE" attach -p "$P" 1 3 >"$TMP/a.out" 2>"$TMP/a.err"
assert_eq "$?" 0 attach/exit_status
check attach "$TMP/a.out" 3 10
"$CONNSCOPE" attach -p "$P" 0.5 4 >"$TMP/h.out" 2>"$TMP/h.err"
assert_eq "$?" 0 attach_half/exit_status
check attach_half "$TMP/h.out" 4 5 2
"$CONNSCOPE" fdleak -p "$P" 1 3 >"$TMP/f.out" 2>"$TMP/f.err"
assert_eq "$?" 0 fdleak/exit_status
check fdleak "$TMP/f.out" 3 10
# The report says the window the count made.
assert_eq "$(grep -c '^connscope fdleak: 3\.[0-9] s (duration), interval 1 s' "$TMP/f.out")" 1 fdleak/window
# -j: no live rows, the duration is interval x count.
"$CONNSCOPE" attach -p "$P" 0.5 2 -j >"$TMP/j.out" 2>"$TMP/j.err"
assert_eq "$(jqn '.run.duration_s' "$TMP/j.out")" 1 attach_json/duration
fx_stop t
