#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# --all reads every network namespace a process is in, not the agent's
# alone (a pod's sockets are visible only from inside its namespace): a
# server and a client in a namespace the test makes, connections held
# before and after the agent started, a churn's TIME_WAIT; seen
# from the host's namespace, `exporter --all` (the image's default): the
# processes' established, listening and TIME_WAIT gauges equal
# `ip netns exec NS ss` counts, what was held at the start included;
# without CAP_SYS_ADMIN (no setns) that is said.
# Its exporter --all counts exactly, every process's events through one
# agent: tests/run.sh runs nothing in the background beside it.
# quiet: yes
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
fx_netns all
port=$(free_port)
H=10 H2=5 N=100

FX_WRAP=(ip netns exec "$NS")
fx_start srv server -p "$port" || fail start "server in $NS"
fx_start cli client -p "$port" || fail start "client in $NS"
FX_WRAP=()
spid=$FX_PID_srv cpid=$FX_PID_cli
assert_eq "$(fx_cmd cli "open $H")" "opened $H" held_before

eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter --all --top-processes 4096 --listen "127.0.0.1:$eport" -i 0.5 2>"$TMP/exp.err"
EXP_PID=$BG_PID
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$eport/metrics"; }
wait_for "scrape | grep -q '^connscope_build_info'" 30 || fail serving "$(head -c 400 "$TMP/exp.err")"
# val NAME PID [STATE]: the process's sample (empty: no series).
val() {
	scrape | awk -v m="$1{pid=\"$2\"," -v st="state=\"${3:-}\"" \
		'index($0, m) == 1 && (st == "state=\"\"" || index($0, st)) {print $NF}' | head -1
}
# Held before the agent started: seeded from the namespace's dump.
wait_for "[ \"\$(val connscope_process_tcp_sockets $cpid established)\" = $H ]" 20
assert_eq "$(val connscope_process_tcp_sockets "$cpid" established)" "$H" client_held_before_seen
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
assert_eq "$(fx_cmd cli "open $H2")" "opened $H2" held_after
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $((H + N + H2)) closed $N open $((H + H2))' ]" 20 ||
	fail server_stats "$(fx_cmd srv stats)"
wait_for "[ \$(inns ss -Htan state time-wait | wc -l) -ge $N ]" 20
est_srv=$(inns ss -Htan state established "( sport = :$port )" | wc -l)
est_cli=$(inns ss -Htan state established "( dport = :$port )" | wc -l)
tw=$(inns ss -Htan state time-wait | wc -l)
assert_eq "$est_srv $est_cli $tw" "$((H + H2)) $((H + H2)) $N" kernel_counts
# Gauges are made at each interval's reconcile: waited for, then read.
wait_for "[ \"\$(val connscope_process_tcp_sockets $cpid time_wait)\" = $tw ]" 20
assert_eq "$(val connscope_process_tcp_sockets "$cpid" time_wait)" "$tw" client_time_wait_eq_ss
wait_for "[ \"\$(val connscope_process_tcp_sockets $spid established)\" = $est_srv ]" 10
assert_eq "$(val connscope_process_tcp_sockets "$spid" established)" "$est_srv" server_established_eq_ss
assert_eq "$(val connscope_process_tcp_sockets "$cpid" established)" "$est_cli" client_established_eq_ss
assert_eq "$(val connscope_process_tcp_sockets "$spid" listen)" 1 server_listen
assert_eq "$(val connscope_process_connections_opened_total "$cpid")" "$((N + H2))" client_opened
assert_eq "$(val connscope_process_connections_accepted_total "$spid")" "$((N + H2))" server_accepted
assert_eq "$(val connscope_process_time_wait_entered_total "$cpid")" "$N" client_time_wait_entered
kill -INT "$EXP_PID"; wait "$EXP_PID"
assert_eq "$?" 0 exporter_exit_status

# Without CAP_SYS_ADMIN no namespace of another process can be entered
# (setns): said once at the start, with how many and what it costs.
eport=$(free_port)
spawn_bg setpriv --bounding-set -sys_admin "$CONNSCOPE" exporter --all --listen "127.0.0.1:$eport" -i 0.5 \
	2>"$TMP/nosa.err"
NOSA_PID=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/nosa.err' || ! kill -0 $NOSA_PID 2>/dev/null" 30
# One message, wrapped at 80 columns (continuation lines indented).
grep -q "^connscope: --all: [1-9][0-9]* network namespaces\? of other processes (containers, pods) cannot be entered without CAP_SYS_ADMIN: .* add CAP_SYS_ADMIN" \
	<(msg_join "$TMP/nosa.err") && ok no_sys_admin_said || fail no_sys_admin_said "$(head -c 600 "$TMP/nosa.err")"
fits80 no_sys_admin "$TMP/nosa.err"
kill -INT "$NOSA_PID"; wait "$NOSA_PID"
assert_eq "$?" 0 no_sys_admin_exit_status
