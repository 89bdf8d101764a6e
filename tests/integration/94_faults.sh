#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Faults: the agent killed with SIGKILL mid-run leaves nothing behind (its
# BPF programs, links and maps, found by the dead agent's own pid through
# /proc/PID/fdinfo, are gone; nothing pinned, nothing mounted) and a second
# agent then runs cleanly on the same target; the same for the exporter
# (and its port is free again). The traced process exiting mid-run ends an
# exporter -p with status 3 and its message, like attach.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)

# kill_and_check NAME PID: SIGKILL, then everything it held is released.
kill_and_check() {
	local name=$1 pid=$2 list left
	list=$(bpf_owned "$pid")
	if [[ $(grep -c '^prog ' <<<"$list") -lt 3 ]]; then
		fail "$name/held_programs" "fdinfo of $pid lists: $(tr '\n' ' ' <<<"$list")"
		return
	fi
	ok "$name/held_programs"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	# The kernel frees them once the last fd is gone (RCU, deferred):
	# wait for that, bounded.
	if wait_for "[ -z \"\$(bpf_alive \"\$list\")\" ]" 20; then
		ok "$name/released_after_sigkill"
	else
		left=$(bpf_alive "$list")
		fail "$name/released_after_sigkill" "still there: $(tr '\n' ' ' <<<"$left")"
	fi
	# What connscope could mount (bpffs, tracefs) is as it was before it
	# ran; other mounts on this machine are not ours to judge.
	assert_eq "$(fs_mounts)" "$MOUNTS_BEFORE" "$name/nothing_mounted"
	assert_eq "$(find /sys/fs/bpf -name '*connscope*' 2>/dev/null | wc -l)" 0 "$name/nothing_pinned"
}

fs_mounts() { awk '$3 == "bpf" || $3 == "tracefs" {print $2, $3}' /proc/mounts | sort; }
MOUNTS_BEFORE=$(fs_mounts)

port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"

# ---- attach, SIGKILL, attach again ----
cs_attach "$TMP/a1.json" "$TMP/a1.err" -p "$FX_PID_cli" -j -i 0.2 ||
	fail attach/start "$(cat "$TMP/a1.err")"
fx_cmd cli "churn 5" >/dev/null
kill_and_check attach "$CS_PID"
cs_attach "$TMP/a2.json" "$TMP/a2.err" -p "$FX_PID_cli" -j -i 0.2 ||
	fail attach/second_agent_start "$(cat "$TMP/a2.err")"
fx_cmd cli "churn 7" >/dev/null
cs_stop
assert_eq "$?" 0 attach/second_agent_exit_status
assert_eq "$(jq -r ".processes[] | select(.pid == $FX_PID_cli) | .totals.connections_opened" "$TMP/a2.json")" 7 \
	attach/second_agent_counts_exactly

# ---- exporter, SIGKILL, exporter again on the same port ----
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$eport" -i 0.2 \
	>"$TMP/e1.out" 2>"$TMP/e1.err"
E1=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/e1.err' || ! kill -0 $E1 2>/dev/null" 30 ||
	fail exporter/start "$(cat "$TMP/e1.err")"
# A scrape under way when it dies.
curl -s --max-time 10 "http://127.0.0.1:$eport/metrics" >/dev/null
kill_and_check exporter "$E1"
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$eport" -i 0.2 \
	>"$TMP/e2.out" 2>"$TMP/e2.err"
E2=$BG_PID
if wait_for "grep -q 'exporter serving' '$TMP/e2.err' || ! kill -0 $E2 2>/dev/null" 30 &&
	kill -0 "$E2" 2>/dev/null; then
	ok exporter/second_on_same_port
else
	fail exporter/second_on_same_port "$(cat "$TMP/e2.err")"
fi
assert_eq "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$eport/metrics")" 200 \
	exporter/second_serves

# ---- the traced process exits under the exporter ----
fx_cmd cli "churn 3" >/dev/null
wait_for "curl -s --max-time 5 http://127.0.0.1:$eport/metrics | grep -q 'connscope_process_connections_opened_total{pid=\"$FX_PID_cli\"'" 10
fix_send cli exit
wait "$E2"
assert_eq "$?" 3 exporter/target_exit_status
if grep -Eq "process $FX_PID_cli \(tcpfix\) exited after [0-9.]+ s" "$TMP/e2.err"; then
	ok exporter/target_exit_message
else
	fail exporter/target_exit_message "$(cat "$TMP/e2.err")"
fi
