#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Rates per second of the load, not of the whole run (#26): a doctor run
# with an idle lead-in of 2 s before a client churns 300 connections. The
# report's load window (run.load_s: first to last connection transition,
# never finer than an interval) lies within the churn's own span as the
# shell timed it, the run is longer by the lead-in, and the churn
# finding's new_connections_per_s is the connections over the load's
# seconds. Before: over the whole run, the lead-in diluting it.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
J=$TMP/load.json
N=300
EV() { echo "(.evidence[] | select(.name == \"$1\") | .value)"; }

fx_start s server || { fail start server; exit 0; }
read -r _ PORT _ <<<"$FIX_LINE"
SPID=$FX_PID_s
fx_start c client -p "$PORT" || { fail start client; exit 0; }
CPID=$FX_PID_c
spawn_bg "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$CPID,$SPID" >"$J" 2>"$TMP/err"
DR_PID=$BG_PID
wait_for "grep -q '^connscope: tracing' '$TMP/err' || ! kill -0 $DR_PID 2>/dev/null" 30
grep -q '^connscope: tracing' "$TMP/err" || { fail attach "$(cat "$TMP/err")"; exit 0; }
# The lead-in: nothing happens for 2 s (the subject, not a wait for an event).
sleep 2
t1=$(date +%s.%N)
assert_eq "$(fx_cmd c "churn $N" 60)" "churned $N" fixture
t2=$(date +%s.%N)
kill -INT "$DR_PID"
wait "$DR_PID"
assert_eq "$?" 0 exit_status
# calc EXPR: awk's arithmetic (1 or 0 for a comparison).
calc() { awk "BEGIN { print ($1) }"; }
span=$(calc "$t2 - $t1")
load=$(jqn '.run.load_s' "$J")
elapsed=$(jqn '.run.elapsed_s' "$J")
echo "# churn span $span s (shell), load_s $load, elapsed_s $elapsed"
[[ $load =~ ^[0-9.]+$ ]] || load=-1
# Within the churn's span (an interval at least: 0.3 s); the run longer by
# the 2 s lead-in, less that interval.
assert_eq "$(calc "$load > 0 && $load <= ($span > 0.3 ? $span : 0.3) + 0.01")" 1 \
	"load_within_the_churn ($load <= max($span, 0.3))"
assert_eq "$(calc "$elapsed - $load >= 1.5")" 1 "lead_in_left_out ($elapsed - $load)"
f="[.findings[] | select(.rule == \"churn\" and .pid == $CPID)][0]"
rate=$(jqn "$f | $(EV new_connections_per_s)" "$J")
echo "# churn finding: $(jqn "$f | .connections" "$J") connections, $rate /s"
assert_eq "$(jqn "$f | .connections" "$J")" "$N" churn_connections
[[ $rate =~ ^[0-9.]+$ ]] || rate=-1
assert_eq "$(calc "$rate / ($N / $load) > 0.999 && $rate / ($N / $load) < 1.001")" 1 \
	"rate_is_per_second_of_the_load ($rate vs $N / $load)"
fx_stop c
fx_stop s
