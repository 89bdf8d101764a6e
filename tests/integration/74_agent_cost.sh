#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# attach reports its own cost: its BPF programs' run time and runs (the
# kernel's BPF run-time stats), its own CPU, and both per traced connection
# end, the same figures in JSON, text, HTML and Prometheus.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=50

port=$(free_port)
fx_start srv server -p "$port" || { fail setup/server "tcpfix server"; exit 1; }
fx_start cli client -p "$port" || { fail setup/client "tcpfix client"; exit 1; }
# --cost-every 1: the run-time stats on in every interval, so every run
# of the churn is in the sums (by default one interval in 10).
cs_attach "$TMP/c.json" "$TMP/c.err" -p "$FX_PID_cli,$FX_PID_srv" -j -i 0.3 --cost-every 1 \
	--prom "$TMP/c.prom" --report "$TMP/c.html" || { fail attach "$(cat "$TMP/c.err")"; exit 1; }
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
wait_for "[[ \$(fx_cmd srv stats) == 'stats accepted $N '* ]]" 10
cs_stop
assert_eq "$?" 0 exit_status
C=.agent.cost
J=$TMP/c.json
assert_eq "$(jqn "$C.connections" "$J")" $((2 * N)) json/connection_ends
# Every state change of these connections ran the state program (the
# kernel fires it for every TCP socket on the host: a lower bound).
assert_eq "$(jqn "[$C.programs[] | select(.name | startswith(\"handle_set_sta\")) | .runs] |
	add >= $((N * 8))" "$J")" true json/state_program_ran
assert_eq "$(jqn "$C.bpf_runs == ([$C.programs[].runs] | add)" "$J")" true json/runs_are_the_sum
assert_eq "$(jqn "$C.bpf_run_time_ns == ([$C.programs[].run_time_ns] | add)" "$J")" true \
	json/run_time_is_the_sum
assert_eq "$(jqn "$C.bpf_run_time_ns > 0 and $C.agent_cpu_s > 0" "$J")" true json/nonzero
assert_eq "$(jqn "$C.stats_connections" "$J")" $((2 * N)) json/all_measured
assert_eq "$(jqn "($C.bpf_ns_per_connection - $C.bpf_run_time_ns / $C.stats_connections) |
	fabs < 0.1" "$J")" true json/per_connection
assert_eq "$(jqn "$C.cost_every == 1 and ($C.stats_s - $C.window_s | fabs) < 0.05" "$J")" true \
	json/stats_on_throughout
# By default nothing is attached that the kernel runs for anything but
# socket events (#23): no process exit, fork, exec or rename, no timer.
# A static target list leaves the map from user space once it is gone;
# --children, --comm and --cgroup add the process hooks they need.
assert_eq "$(jqn "[$C.programs[].name | select(test(\"^handle_(exit|fork|exec|rename)_|^handle_timer_\"))]
	| join(\" \")" "$J")" "" json/only_socket_programs
# The same reading in the other outputs of that run.
runs=$(jqn "$C.bpf_runs" "$J")
assert_eq "$(grep -o 'data-k="agent_cost">BPF <span data-k="bpf_run_s">[0-9.]*</span> s in [0-9]* runs' \
	"$TMP/c.html" | grep -o 'in [0-9]* runs')" "in $runs runs" html/same_runs
assert_eq "$(awk '/^connscope_bpf_program_runs_total\{/ { s += $NF } END { print s }' "$TMP/c.prom")" \
	"$runs" prom/runs_sum
assert_eq "$(awk '/^connscope_traced_connections_total / { print $2 }' "$TMP/c.prom")" $((2 * N)) \
	prom/connections
assert_eq "$(grep -c '^connscope_cost_per_connection_seconds{part="bpf"} ' "$TMP/c.prom")" 1 prom/per_conn
assert_eq "$(promtool check metrics <"$TMP/c.prom" 2>&1)" "" prom/promtool_silent
# The text report (a run of its own): the total and one line per program
# that ran, which add up to it.
"$CONNSCOPE" attach -p "$FX_PID_cli,$FX_PID_srv" -d 3 -i 0.2 >"$TMP/t.txt" 2>"$TMP/t.err"
assert_eq "$?" 0 text/exit_status
# By default the stats are on for one interval in 10 (they slow every BPF
# program on the host while on): of this run's 15 intervals (its clock
# starts once the programs are loaded), the first and the eleventh: at
# least one interval, 0.2 s.
assert_eq "$(awk '/^  BPF run time measured 1 interval in 10: / { print ($9 >= 0.2 && $9 <= $12 / 3) }' \
	"$TMP/t.txt")" 1 text/sampled_one_in_ten
# A measured window lasts an interval even when the run loop's first
# tick comes early (the stats go on while the programs are still being
# set up, before the run's clock starts): -i 0.5, at least 0.5 s measured
# (0.1-0.2 s when the window ended at the second tick).
"$CONNSCOPE" attach -p "$FX_PID_cli" -d 2.5 -i 0.5 >"$TMP/w.txt" 2>/dev/null
assert_eq "$(awk '/^  BPF run time measured 1 interval in 10: / { print ($9 >= 0.5) }' "$TMP/w.txt")" 1 \
	text/window_is_an_interval
total=$(sed -n 's/^agent cost: BPF [0-9.]* s in \([0-9]*\) runs, agent CPU [0-9.]* s$/\1/p' "$TMP/t.txt")
assert_eq "$(sed -n '/^agent cost:/,/^[^ ]/p' "$TMP/t.txt" |
	awk '$3 == "s" && $5 == "runs" { s += $4 } END { print s + 0 }')" "${total:-none}" text/programs_add_up
"$CONNSCOPE" attach -p "$FX_PID_cli" -d 0.3 -i 0.1 -j --cost-every 0 >"$TMP/z.json" 2>/dev/null
assert_eq "$(jqn '.agent.cost | "\(.cost_every) \(.bpf_runs) \(.stats_s)"' "$TMP/z.json")" "0 0 0" \
	json/cost_every_0_measures_nothing
"$CONNSCOPE" attach -p "$FX_PID_cli" -d 0.3 --cost-every x >/dev/null 2>"$TMP/bad.err"
assert_eq "$? $(wc -l <"$TMP/bad.err")" "2 1" bad/cost_every_one_message
fx_stop cli; fx_stop srv
