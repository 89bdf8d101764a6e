#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The run's last census's second look at a TIME_WAIT it lacked: sock_diag's
# exact look at each one's 4-tuple (attach_tw_look), made in the targets'
# network namespace (one the test makes, the agent in the host's), for
# IPv4 (127.0.0.1) and IPv6 (::1) TIME_WAIT alike. A census taken while
# sockets come and go can skip some; CONNSCOPE_CENSUS_FAULT=lack-tw makes
# the last one lose all it read, so every one the kernel still has must be
# found by the look (agent.time_wait_looked_there) and stay live in the
# books: none ended early or expired, each client's TIME_WAIT equal to the
# namespace's sock_diag. A look entering the wrong namespace, or turning
# an IPv6 tuple into a wrong request, answers "none": they would all end.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=6

# tcp_rfc1337=1 in the namespace (fx_twns says why): the TIME_WAIT live
# their 60 s, well past this test.
fx_twns twlook
p4=$(fx_port) p6=$(fx_port -6)
fx_start s4 server -p "$p4" && fx_start c4 client -p "$p4" &&
	fx_start s6 server -6 -p "$p6" && fx_start c6 client -6 -p "$p6" ||
	{ fail start "fixtures in $NS"; exit 1; }
c4=$FX_PID_c4 c6=$FX_PID_c6

# `run` for its interval lines (attach has none with -j): its command is
# a waiter that ends when the test says, and the run with it.
J=$TMP/look.json S=$TMP/look.ndjson
run_until_told "$J" "$TMP/look.err" env CONNSCOPE_CENSUS_FAULT=lack-tw "$CONNSCOPE" run \
	-p "$c4,$c6,$FX_PID_s4,$FX_PID_s6" --no-trace-command -j -i 0.2 --json-stream "$S" ||
	{ fail run_started "$(cat "$TMP/look.err")"; exit 1; }
assert_eq "$(fx_cmd c4 "churn $N")" "churned $N" churned_ipv4
assert_eq "$(fx_cmd c6 "churn $N")" "churned $N" churned_ipv6
wait_for "[ \$(tw_on_port $p4) -eq $N ] && [ \$(tw_on_port $p6) -eq $N ] && closes_done $p4 && closes_done $p6" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$p4") + $(tw_on_port "$p6") TIME_WAIT in $NS, want $N + $N"
# The look names the device a census showed each one bound to: one census
# must have shown them all before the last (an interval's line says so).
wait_for "[ \"\$(tw_now_shown $S $c4 $c6)\" = $((2 * N)) ]" 20 ||
	fail census_showed_them "last line: $(tail -n 1 "$S")"
run_tell
assert_eq "$?" 0 exit_status
kernel4=$(tw_on_port "$p4") kernel6=$(tw_on_port "$p6")
assert_eq "$kernel4 $kernel6" "$N $N" kernel_still_holds_them
assert_eq "$(jqn '[.agent.time_wait_looked, .agent.time_wait_looked_there] | @tsv' "$J")" \
	"$(printf '%s\t%s' $((2 * N)) $((2 * N)))" every_one_looked_at_and_there
for c in c4 c6; do
	pid=FX_PID_$c
	P=".processes[] | select(.pid == ${!pid})"
	assert_eq "$(jqn "$P | [.totals.time_wait_entered, .time_wait, .time_wait_in_books] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' $N $N $N)" "${c}_live_as_the_look_said"
	assert_eq "$(jqn "$P | [.totals.time_wait_ended_early, .totals.time_wait_expired, .totals.time_wait_end_unseen] | @tsv" "$J")" \
		"$(printf '0\t0\t0')" "${c}_none_ended"
done
assert_eq "$(tw_unbalanced "$J")" "" tw_books_balance
assert_eq "$(jqn '.agent.books_mismatch_last' "$J")" 0 books_agree_with_kernel
for f in c4 s4 c6 s6; do fx_stop $f; done
