#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# 52_tw_replaced with no census between (review-s40 C1): a traced server's
# TIME_WAIT is taken over at its very 4-tuple (TCP_TW_SYN) for an untraced
# server, whose connection closes into TIME_WAIT there too, all before any
# census has shown the first one. The books have the first one's socket
# cookie from its close record (made at its FIN_WAIT1, so tcp_time_wait
# copied it into the tw socket): the census that shows the tuple shows
# another connection's TIME_WAIT, and the traced one ended early. Failed
# before: the entry learned the newcomer's cookie from that census and was
# kept live, the newcomer's TIME_WAIT charged to it (time_wait 1, ended
# early 0). Socket storage's records and --per-transition's. In a network
# namespace the test makes, so the ports are ours.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
TWR=$TESTS_DIR/fixtures/twreplace.py
INTERVAL_US=2000000

fx_twns twunseen

lines() {
	if [ -e "$S" ]; then wc -l <"$S"; else echo 0; fi
}

# unseen_case NAME [AGENT_ARGS...]: the case with the agent's records as
# ARGS make them (socket storage's whole lives, or --per-transition's).
unseen_case() {
	local name=$1 port apid n t0 t1 cport tries=0 clean=0 P
	shift

	port=$(fx_port)
	fix_start A "${FX_WRAP[@]}" python3 "$TWR" server "$port" && fix_expect A "listening *" 10 ||
		{ fail "$name/start" "traced server in $NS"; return; }
	apid=$A_PID
	# The untraced server and its client in one process, the traced
	# server's client too: each step takes milliseconds once asked.
	fix_start B "${FX_WRAP[@]}" python3 "$TWR" taker "$port" && fix_expect B "ready *" 10 ||
		{ fail "$name/start" "untraced taker in $NS"; return; }

	J=$TMP/$name.json S=$TMP/$name.ndjson
	run_until_told "$J" "$TMP/$name.err" "$CONNSCOPE" run -p "$apid" "$@" --no-trace-command -j -i 2 \
		--json-stream "$S" || { fail "$name/run_started" "$(cat "$TMP/$name.err")"; return; }

	# Just after an interval's census (its line), the traced TIME_WAIT
	# and its takeover, well inside the interval: no census began
	# between the two when the next line has not come and less than half
	# the interval went by. Else again, from another client port (each
	# try's TIME_WAIT is counted all the same).
	while ((tries < 3 && !clean)); do
		n=$(lines)
		wait_for "[ \$(lines) -gt $n ]" 10 || { fail "$name/census_line" "no interval line in 10 s"; break; }
		n=$(lines)
		t0=$(_lib_now_us)
		fix_send A serve
		fix_cmd B client "done *" || { fail "$name/client" "taker: '$FIX_LINE'"; break; }
		cport=${FIX_LINE#done }
		fix_expect A "served $cport" 10 || { fail "$name/served" "traced server: '$FIX_LINE'"; break; }
		fix_cmd A unlisten "unlistened" || { fail "$name/unlisten" "traced server: '$FIX_LINE'"; break; }
		fix_cmd B "take $cport" "taken $cport" || { fail "$name/taken" "taker: '$FIX_LINE'"; break; }
		t1=$(_lib_now_us)
		tries=$((tries + 1))
		(($(lines) == n && t1 - t0 < INTERVAL_US / 2)) && clean=1
		echo "52_tw_replaced_unseen: $name try $tries from port $cport in" \
			"$(((t1 - t0) / 1000)) ms, clean $clean" >&2
		((clean)) || fix_cmd A listen "listening *" ||
			{ fail "$name/relisten" "traced server: '$FIX_LINE'"; break; }
	done
	assert_eq "$clean" 1 "$name/takeover_between_two_censuses"
	assert_eq "$(tw_on_port "$port")" "$tries" "$name/kernel_holds_the_newcomers"
	# Two censuses more: the first lacks the traced TIME_WAIT, the second
	# ends it.
	n=$(lines)
	wait_for "[ \$(lines) -ge $((n + 2)) ]" 10 ||
		fail "$name/two_more_censuses" "$(lines) lines, want $((n + 2))"
	run_tell
	assert_eq "$?" 0 "$name/exit_status"
	P=".processes[] | select(.pid == $apid)"
	assert_eq "$(jqn "$P | [.totals.time_wait_entered, .totals.time_wait_ended_early, .totals.time_wait_expired, .totals.time_wait_end_unseen] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0\t0' "$tries" "$tries")" "$name/traced_time_wait_ended_early"
	assert_eq "$(jqn "$P | [.time_wait, .time_wait_in_books] | @tsv" "$J")" "$(printf '0\t0')" \
		"$name/newcomer_not_charged_to_it"
	assert_eq "$(tw_unbalanced "$J")" "" "$name/tw_books_balance"
	fix_send A exit
	fix_send B exit
}

unseen_case sk
unseen_case pt --per-transition
