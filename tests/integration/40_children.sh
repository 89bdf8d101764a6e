#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# --children: a process the target forks after attach is traced too, and
# charged under its own pid; without the flag it is not.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
# The fixtures in a namespace of the test's own (fx_twns): each case waits
# for its 4 TIME_WAIT, which resets could end early in ours.
fx_twns children
port=$(fx_port)
fx_start srv server -p "$port" || fail start server

# run_case NAME FLAGS...: a shell that forks tcpfix once told "go".
run_case() {
	local name=$1 kid tw0
	shift
	tw0=$(tw_on_port "$port")
	fix_start "$name" "${FX_WRAP[@]}" bash -c 'read -r go; "$@"; exit $?' _ "$FIXTURES/tcpfix" client -p "$port"
	local wrapper_var=${name}_PID
	cs_attach "$TMP/$name.json" "$TMP/$name.err" -p "${!wrapper_var}" -j -i 0.2 "$@" ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return; }
	fix_send "$name" go
	fix_expect "$name" "ready *" 10 || { fail "$name/child_started" "no ready line"; return; }
	kid=${FIX_LINE#ready }
	assert_eq "$(fx_cmd "$name" "churn 4")" "churned 4" "$name/churned"
	# This case's 4, past those of the case before.
	wait_for "[ \$(tw_on_port $port) -ge $((tw0 + 4)) ] && closes_done $port" 20 ||
		fail "$name/kernel_closed" "kernel: $(tw_on_port "$port") TIME_WAIT, $tw0 before"
	cs_stop
	CHILD=$kid
}

run_case follow --children
assert_eq "$(jq -r ".processes[] | select(.pid == $CHILD) | [.target, .comm, .totals.connections_opened, .totals.time_wait_entered] | @tsv" "$TMP/follow.json")" \
	"$(printf 'false\ttcpfix\t4\t4')" follow/child_charged
assert_eq "$(jq -r '.agent.children_followed >= 1' "$TMP/follow.json")" true follow/children_counted
assert_eq "$(jq -r .run.follow_children "$TMP/follow.json")" true follow/run_flag
fx_stop follow

run_case nofollow
assert_eq "$(jq -r "[.processes[] | select(.pid == $CHILD)] | length" "$TMP/nofollow.json")" 0 nofollow/child_not_traced
fx_stop nofollow
fx_stop srv
