#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Least privilege: connscope as user nobody with only CAP_BPF, CAP_PERFMON,
# CAP_NET_ADMIN, CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (setpriv, ambient)
# traces a root-owned process exactly, with nothing lost, and serves the
# exporter. Then each capability taken away in turn says what it costs:
# the run is refused with a message naming it, or runs with that part off
# and says so (never silently less): without CAP_BPF, CAP_PERFMON,
# CAP_DAC_READ_SEARCH or (for another user's process) CAP_SYS_PTRACE it is
# refused; without CAP_NET_ADMIN QUIC on the wire is off, counted.
# Its exporter --all asserts no event lost, on the whole machine: tests/run.sh
# runs nothing in the background beside it.
# quiet: yes
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
chmod 755 "$TMP"
ALL=bpf,perfmon,net_admin,sys_ptrace,dac_read_search

# as CAPS CMD...: CMD as nobody with exactly CAPS (comma list, no +),
# in place of the (sub)shell that runs it: "as ... &" gives CMD's pid.
as() {
	local caps=$1 set
	shift
	set=-all${caps:+,+${caps//,/,+}}
	exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="$set" \
		--ambient-caps="$set" --bounding-set="$set" "$@"
}
without() { tr ',' '\n' <<<"$ALL" | grep -vx "$1" | paste -sd, -; }

port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"

# ---- the whole set: exact, nothing lost ----
as "$ALL" "$CONNSCOPE" attach -p "$FX_PID_cli" -d 3 -j -i 0.5 >"$TMP/all.json" 2>"$TMP/all.err" &
A=$!
wait_for "grep -qs '^connscope: tracing' '$TMP/all.err' || ! kill -0 $A 2>/dev/null" 30
assert_eq "$(fx_cmd cli "churn 6")" "churned 6" all/churned
wait "$A"
assert_eq "$?" 0 all/exit_status
assert_eq "$(jq -r ".processes[] | select(.pid == $FX_PID_cli) | .totals.connections_opened" "$TMP/all.json")" 6 \
	all/exact_counts
assert_eq "$(jq -r '.agent.losses.total' "$TMP/all.json")" 0 all/nothing_lost
assert_eq "$(jq -r ".processes[] | select(.pid == $FX_PID_cli) | has(\"fds\")" "$TMP/all.json")" true \
	all/fd_section
assert_eq "$(jq -r '.agent.quic.wire' "$TMP/all.json")" true all/quic_wire_attached

eport=$(free_port)
as "$ALL" "$CONNSCOPE" exporter --all --listen "127.0.0.1:$eport" -i 0.5 -d 20 \
	>"$TMP/exp.out" 2>"$TMP/exp.err" &
E=$!
on_exit "kill $E 2>/dev/null; wait $E 2>/dev/null"
if wait_for "curl -s --max-time 5 http://127.0.0.1:$eport/metrics | grep -q '^connscope_build_info'" 30; then
	ok exporter/serves
else
	fail exporter/serves "$(cat "$TMP/exp.err")"
fi
# Its HTTP thread holds no capability either (the ambient ones dropped).
caps=$(for t in /proc/"$E"/task/*; do awk '/^CapEff:/ {print $2}' "$t/status"; done | sort | uniq -c | awk '{print $2}' | tr '\n' ' ')
if [[ $caps == *0000000000000000* ]]; then
	ok exporter/http_thread_no_caps
else
	fail exporter/http_thread_no_caps "CapEff of its threads: $caps"
fi
kill "$E"
wait "$E" 2>/dev/null

# ---- one capability less each time ----
# expect_refused NAME CAP PATTERN: exit 1, one message (its wrapped lines
# joined) matching PATTERN.
expect_refused() {
	(as "$(without "$2")" "$CONNSCOPE" attach -p "$FX_PID_cli" -d 1 -j) >"$TMP/$1.out" 2>"$TMP/$1.err"
	assert_eq "$?" 1 "$1/exit_status"
	msg_join "$TMP/$1.err" >"$TMP/$1.msg"
	fits80 "$1" "$TMP/$1.err"
	if grep -Eq -- "$3" "$TMP/$1.msg" && [[ $(wc -l <"$TMP/$1.msg") -eq 1 ]]; then
		ok "$1/message"
	else
		fail "$1/message" "$(cat "$TMP/$1.err")"
	fi
}
expect_refused no_bpf bpf "needs root \(or CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH"
expect_refused no_perfmon perfmon "needs root \(or CAP_BPF, CAP_PERFMON"
expect_refused no_dac_read_search dac_read_search "cannot read tracefs .*CAP_DAC_READ_SEARCH"

# Without CAP_NET_ADMIN: TCP exact, QUIC on the wire off, and said.
as "$(without net_admin)" "$CONNSCOPE" attach -p "$FX_PID_cli" -d 2 -j >"$TMP/nn.json" 2>"$TMP/nn.err" &
A=$!
wait_for "grep -qs '^connscope: tracing' '$TMP/nn.err' || ! kill -0 $A 2>/dev/null" 30
fx_cmd cli "churn 4" >/dev/null
wait "$A"
assert_eq "$?" 0 no_net_admin/exit_status
assert_eq "$(jq -r ".processes[] | select(.pid == $FX_PID_cli) | .totals.connections_opened" "$TMP/nn.json")" 4 \
	no_net_admin/tcp_exact
assert_eq "$(jq -r '.agent.losses.attach_failed' "$TMP/nn.json")" 1 no_net_admin/counted
assert_eq "$(grep -c 'QUIC on the wire is off' "$TMP/nn.err")" 1 no_net_admin/said

# Without CAP_SYS_PTRACE another user's (root's) process cannot be read
# at all: not its network namespace, not its fds.
expect_refused no_sys_ptrace sys_ptrace "cannot read the namespaces and fds of pid [0-9]+ \(tcpfix\): .*lacks CAP_SYS_PTRACE"
