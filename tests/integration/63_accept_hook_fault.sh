#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# CONNSCOPE_HOOK_FAULT=accept-fexit makes the attach of fexit on
# inet_csk_accept fail where it is loaded, so the fallback to the accept()
# exits runs (the 6.1 guest's fexit_refused/ case, tests/kernels/guest.sh).
# Where it is not loaded the knob changes nothing and says nothing. Here,
# --per-transition with and without it: a churn of N, accepted N either
# way and the same run.accept_hook; the knob's one stderr line only where
# the run without it had the fexit (this kernel refuses fexit: none).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=10
FEXIT=fexit/inet_csk_accept
EXITS="tracepoint/syscalls/sys_exit_accept, sys_exit_accept4"

# In a network namespace of the test's own: its TIME_WAIT go with it.
fx_netns hookfault
FX_WRAP=(ip netns exec "$NS")
CS_WRAP=(ip netns exec "$NS")
port=$(inns "$FIXTURES/tcpfix" freeport)
fx_start srv server -p "$port" && fx_start cli client -p "$port" ||
	{ fail setup/fixtures "tcpfix server and client"; exit 1; }

# run NAME: attach --per-transition to the server over a churn of N.
run() {
	local name=$1 want=$2
	if cs_attach "$TMP/$name.json" "$TMP/$name.err" -p "$FX_PID_srv" --per-transition \
		-i 0.2 -j; then
		assert_eq "$(fx_cmd cli "churn $N")" "churned $N" "$name/churned"
		wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $want closed $want open 0' ]" 30
		cs_stop
		assert_eq "$?" 0 "$name/exit_status"
		assert_eq "$(jqn ".processes[] | select(.pid == $FX_PID_srv) |
			.totals.connections_accepted" "$TMP/$name.json")" "$N" "$name/accepted"
	else
		fail "$name/attach" "$(tail -c 600 "$TMP/$name.err")"
	fi
}

run plain "$N"
hook=$(jqn '.run.accept_hook' "$TMP/plain.json")
assert_eq "$([[ $hook == "$FEXIT" || $hook == "$EXITS" ]] && echo known)" known plain/accept_hook
export CONNSCOPE_HOOK_FAULT=accept-fexit
run fault $((2 * N))
unset CONNSCOPE_HOOK_FAULT
assert_eq "$(jqn '.run.accept_hook' "$TMP/fault.json")" "$EXITS" fault/accept_hook_exits
if [[ $hook == "$FEXIT" ]]; then
	assert_eq "$(grep 'fexit' "$TMP/fault.err")" \
		"connscope: fexit/inet_csk_accept refused (EBUSY); using the accept() exits" \
		fault/said_once
else
	# Not loaded here: the knob is silent, stderr as without it.
	assert_eq "$(grep -c 'fexit\|cannot attach' "$TMP/fault.err")" 0 fault/silent_where_not_loaded
fi
fx_stop cli
fx_stop srv
