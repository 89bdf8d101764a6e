#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A traced server's TIME_WAIT replaced at its very 4-tuple by an untraced
# server's (review-hagent H3): the traced one closes first, lets its port
# go, and the same client port's next SYN takes its TIME_WAIT over
# (TCP_TW_SYN) for an untraced listener on that port, which closes first
# too. The kernel then holds one TIME_WAIT at the tuple, not the books'
# (another socket cookie); no end record tells the books, so the census
# and the run's last exact look must tell it by the cookie: the traced
# server's TIME_WAIT ended early, not live, the newcomer's not charged to
# it. Failed before: its books kept it live (time_wait 1, ended early 0).
# In a network namespace the test makes, so the port is ours alone.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
TWR=$TESTS_DIR/fixtures/twreplace.py

fx_twns twrep
port=$(fx_port)
fix_start A "${FX_WRAP[@]}" python3 "$TWR" server "$port" && fix_expect A "listening *" 10 ||
	{ fail start "traced server in $NS"; exit 1; }
apid=$A_PID

# `run` for its interval lines; its command waits for the test's word.
J=$TMP/rep.json S=$TMP/rep.ndjson
run_until_told "$J" "$TMP/rep.err" "$CONNSCOPE" run -p "$apid" --no-trace-command -j -i 0.5 \
	--json-stream "$S" || { fail run_started "$(cat "$TMP/rep.err")"; exit 1; }

# The traced server's TIME_WAIT at (port, cport), shown by a census (which
# gives the books its cookie).
fix_send A serve
cport=$(inns python3 "$TWR" client "$port" 0 | awk '{print $2}')
fix_expect A "served $cport" 10 || fail served "traced server: '$FIX_LINE'"
wait_for "[ \$(tw_on_port $port) -eq 1 ]" 10 || fail first_time_wait "kernel: $(tw_on_port "$port") TIME_WAIT"
wait_for "[ \"\$(tw_now_shown $S $apid)\" = 1 ]" 20 || fail census_showed_it "last line: $(tail -n 1 "$S")"

# Its port let go, an untraced server takes the next SYN from cport.
fix_cmd A unlisten "unlistened" || fail unlisten "traced server: '$FIX_LINE'"
fix_start B "${FX_WRAP[@]}" python3 "$TWR" server "$port" && fix_expect B "listening *" 10 ||
	fail start "untraced server in $NS"
fix_send B serve
assert_eq "$(inns python3 "$TWR" client "$port" "$cport")" "done $cport" client_from_the_same_port
fix_expect B "served $cport" 10 || fail served "untraced server: '$FIX_LINE'"
wait_for "[ \$(netstat_field TW) -eq 2 ]" 10
assert_eq "$(netstat_field TW) $(tw_on_port "$port")" "2 1" kernel_made_two_holds_one
run_tell
assert_eq "$?" 0 exit_status
P=".processes[] | select(.pid == $apid)"
assert_eq "$(jqn "$P | [.totals.time_wait_entered, .totals.time_wait_ended_early, .totals.time_wait_expired, .totals.time_wait_end_unseen] | @tsv" "$J")" \
	"$(printf '1\t1\t0\t0')" traced_time_wait_ended_early
assert_eq "$(jqn "$P | [.time_wait, .time_wait_in_books] | @tsv" "$J")" "$(printf '0\t0')" \
	newcomer_not_charged_to_it
assert_eq "$(tw_unbalanced "$J")" "" tw_books_balance
echo "52_tw_replaced: looked $(jqn '[.agent.time_wait_looked, .agent.time_wait_looked_there] | @tsv' "$J")" >&2
fix_send A exit
fix_send B exit
