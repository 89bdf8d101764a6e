#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A traced listener that predates the agent (seeded at start, by socket and
# by key) closes, and a process we do not trace listens at the same
# (namespace, address, port): the children of that new listener are no
# one's we trace. Its clients connect and reset before it accepts them (no
# I/O in a task ever names their real owner). In socket-storage mode the
# seeded key stayed after the close and those children were charged to the
# old listener's owner (closed 20 of 20). Both kernel-side modes, each in
# a network namespace of its own.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=20

listen_key_case() {
	local m=$1 J old
	shift
	fx_netns "lkey$m"
	FX_WRAP=(ip netns exec "$NS")
	CS_WRAP=(ip netns exec "$NS")
	fx_start "old$m" server -p 8080 && fx_start "c$m" client -p 8080 ||
		{ fail "$m/start" fixtures; return; }
	old=FX_PID_old$m
	old=${!old}
	local c=FX_PID_c$m
	J=$TMP/lkey_$m.json
	cs_attach "$J" "$TMP/lkey_$m.err" -p "$old,${!c}" -j -i 0.2 "$@" ||
		{ fail "$m/attach" "$(cat "$TMP/lkey_$m.err")"; return; }
	fx_stop "old$m"
	wait_for '[ "$(inns ss -Hltn "( sport = :8080 )" | wc -l)" -eq 0 ]' 10 ||
		fail "$m/old_listener_gone" "still listening"
	# Not traced: started after attach, not in -p.
	fx_start "new$m" server -p 8080 || { fail "$m/start_new" fixture; return; }
	assert_eq "$(fx_cmd "c$m" "churn-reset $N")" "churned $N" "$m/churned"
	wait_for '[ "$(inns ss -Htan state syn-recv state established "( sport = :8080 )" | wc -l)" -eq 0 ]' 10
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	# The old listener's books have none of the new listener's children.
	assert_eq "$(jqn "[.processes[] | select(.pid == $old) | .totals | .connections_accepted + .connections_closed + .resets] | add // 0" "$J")" \
		0 "$m/old_owner_charged_nothing"
	assert_eq "$(jqn ".processes[] | select(.pid == ${!c}) | .totals.connections_opened" "$J")" $N "$m/client_opened"
	fx_stop "c$m"; fx_stop "new$m"
	FX_WRAP=() CS_WRAP=()
}

listen_key_case sk
listen_key_case pt --per-transition
