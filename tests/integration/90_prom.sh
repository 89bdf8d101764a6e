#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Prometheus text output (`summary --prom`, `attach --prom FILE`): promtool
# accepts it without lint findings, and its numbers are the run's.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=12
command -v promtool >/dev/null || { fail promtool "promtool missing (Debian: prometheus)"; exit 0; }

"$CONNSCOPE" summary --prom >"$TMP/sum.prom"
assert_eq "$?" 0 summary/exit_status
promtool check metrics <"$TMP/sum.prom" >"$TMP/lint.txt" 2>&1
assert_eq "$?" 0 "summary/promtool_clean $(head -c 300 "$TMP/lint.txt")"
assert_eq "$(grep -c '^connscope_sockstat_TCP_tw [0-9]*$' "$TMP/sum.prom")" 1 summary/node_sockstat_mirror

# The run's fixtures in a namespace of the test's own, where their
# TIME_WAIT live their 60 s (fx_twns): prom/time_wait_live counts them.
fx_twns prom
port=$(fx_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
cs_attach "$TMP/out.json" "$TMP/err" -p "$FX_PID_cli" -j -i 0.3 --prom "$TMP/run.prom" ||
	fail attach "$(cat "$TMP/err")"
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
wait_for "[ \$(tw_on_port $port) -ge $N ] && closes_done $port" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$port") TIME_WAIT"
cs_stop
assert_eq "$?" 0 attach/exit_status
assert_eq "$(ls "$TMP" | grep -c '\.tmp$')" 0 attach/no_tmp_left
promtool check metrics <"$TMP/run.prom" >"$TMP/lint2.txt" 2>&1
assert_eq "$?" 0 "attach/promtool_clean $(head -c 300 "$TMP/lint2.txt")"
val() { awk -v m="$1" -v p="pid=\"$FX_PID_cli\"" 'index($0, m "{") == 1 && index($0, p) {print $NF}' "$TMP/run.prom" | head -1; }
assert_eq "$(val connscope_process_connections_opened_total)" "$N" prom/opened
assert_eq "$(val connscope_process_time_wait_entered_total)" "$N" prom/time_wait_entered
assert_eq "$(val connscope_process_connections_opened_total)" \
	"$(jq -r ".processes[] | select(.pid == $FX_PID_cli) | .totals.connections_opened" "$TMP/out.json")" prom_eq_json
assert_eq "$(awk -v p="pid=\"$FX_PID_cli\"" 'index($0, "connscope_process_tcp_sockets{") == 1 && index($0, p) && /state="time_wait"/ {print $NF}' "$TMP/run.prom")" "$N" prom/time_wait_live
# Histogram: cumulative buckets, +Inf equals _count equals connections closed.
inf=$(awk -v p="pid=\"$FX_PID_cli\"" 'index($0, "connscope_process_connection_lifetime_seconds_bucket{") == 1 && index($0, p) && /le="\+Inf"/ {print $NF}' "$TMP/run.prom")
assert_eq "$inf" "$N" prom/lifetime_inf_bucket
assert_eq "$(val connscope_process_connection_lifetime_seconds_count)" "$N" prom/lifetime_count
assert_eq "$(awk -v p="pid=\"$FX_PID_cli\"" 'index($0, "connscope_process_connection_lifetime_seconds_bucket{") == 1 && index($0, p) {if ($NF < last) bad = 1; last = $NF} END {print bad ? "no" : "yes"}' "$TMP/run.prom")" yes prom/buckets_cumulative
assert_eq "$(awk '/^connscope_events_lost_total / {print $2}' "$TMP/run.prom")" 0 prom/events_lost
fx_stop cli; fx_stop srv

# A path that cannot be written: one message, exit 1, nothing left behind.
"$CONNSCOPE" attach -p $$ -d 1 --prom /nonexistent-dir/x.prom >"$TMP/bad.out" 2>"$TMP/bad.err"
assert_eq "$?" 1 bad/exit_status
assert_eq "$(grep -c 'cannot write the report /nonexistent-dir/x.prom' "$TMP/bad.err")" 1 bad/message
"$CONNSCOPE" summary -j --prom >/dev/null 2>"$TMP/bad2.err"
assert_eq "$?" 2 bad/two_formats_status
assert_eq "$(grep -c 'pick one' "$TMP/bad2.err")" 1 bad/two_formats_message
