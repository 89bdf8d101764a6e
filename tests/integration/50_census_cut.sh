#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The census's moment (user/books/census_cut.h): while a pooling client
# churns (each round of 8 requests closes 4 connections and opens 4), every
# reconcile's census has connections closing and opening while it is
# taken and before the books are compared with it. Books and kernel must
# agree at every reconcile: a connection that closed after the walk passed
# it was counted a gap of one (the demo ended "books vs kernel: DISAGREE
# by 1" in 1 of 25 runs).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

need_fixture poolfix
POOLFIX=$FIXTURES/poolfix
TMP=$(lib_tmpdir)
J=$TMP/cut.json

fix_start srv "$POOLFIX" server && fix_expect srv 'listening *' 10 ||
	{ fail server_started "${FIX_LINE:-no line}"; exit 1; }
read -r _ PORT SPID <<<"$FIX_LINE"
fix_start cli "$POOLFIX" client -p "$PORT" -w 8 -P 4 -b -n "${CUT_REQUESTS:-40000}" -H &&
	fix_expect cli 'ready *' 10 || { fail client_started "${FIX_LINE:-no line}"; exit 1; }
CPID=${FIX_LINE#ready }
cs_attach "$J" "$TMP/cut.err" -p "$CPID,$SPID" -j -i 0.2 ||
	{ fail attached "$(cat "$TMP/cut.err")"; exit 1; }
if ! fix_cmd cli go '@(done|error) *' 120 || [[ $FIX_LINE != done* ]]; then
	fail client_done "${FIX_LINE:-no reply}"
	cs_stop
	exit 1
fi
read -r _ _ _ _ OPENED _ <<<"$FIX_LINE"
cs_stop
assert_eq "$?" 0 exit_status
reconciles=$(jqn '.agent.reconciles' "$J")
# Reconciles while it churned: at -i 0.2 one every 0.2 s of the run. The
# census is the sock_diag dump for the first 2 s, the iter/tcp walk after.
reads=$(jqn '.sources | "walked \(.tcp_reads_walked), dumped \(.tcp_reads_dumped)"' "$J")
assert_eq "$((reconciles >= 3))" 1 "reconciles_during_the_churn ($reconciles: $reads; $OPENED connections)"
assert_eq "$(jqn '.agent.books_mismatch_max' "$J")" 0 "books_agree_at_every_reconcile"
assert_eq "$(jqn '.agent.books_mismatch_last' "$J")" 0 books_agree_at_the_end
assert_eq "$(jqn '.agent.events_lost' "$J")" 0 no_events_lost
# Every connection the cut could not note is counted (agent.losses): none.
assert_eq "$(jqn '.agent.losses.census_cut_not_noted' "$J")" 0 cut_noted_every_connection
