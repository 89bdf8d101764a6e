#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The census walk says of every socket what sock_diag says (#23 item 6).
# Each interval the agent reads its namespaces' TCP sockets from the birth
# pass (iter/tcp) that it runs anyway, no longer from a sock_diag dump as
# well; the books are compared with that view, so it must be the dump's
# word for word. With CONNSCOPE_CENSUS=check the agent dumps too after
# each walk and compares the two, socket by socket (by cookie), every
# field (family, state, timer, retransmits, ports, addresses, queues, uid,
# inode; the timer's expiry within the time between the two). A fixture
# holds sockets in every state the dump shows, IPv4 and IPv6: listeners
# (one with a full accept queue, one another uid's), pairs with
# keep-alive, unread data and a zero window's probe, half-closed ones
# (FIN_WAIT2 / CLOSE_WAIT), TIME_WAIT, request socks (SYN_RECV), SYN_SENT.
# Then the same run as the census always was (CONNSCOPE_CENSUS=dump)
# reports the same truth.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
fx_netns cwalk
fix_start socks ip netns exec "$NS" python3 "$TESTS_DIR/fixtures/census_socks.py"
fix_expect socks 'ready *' 30 || { fail setup/fixture "no ready line"; exit 0; }
pid=$socks_PID
want_states="established syn_sent syn_recv fin_wait2 time_wait close_wait listen"

CS_WRAP=(ip netns exec "$NS")
export CONNSCOPE_CENSUS=check
# The walk stands in once the agent has learnt HZ (from the first interval).
cs_attach "$TMP/a.json" "$TMP/a.err" -p "$pid" -i 0.5 -j || { fail attach/start "$(cat "$TMP/a.err")"; exit 0; }
wait_for "[ \$(grep -c '^connscope: census check: netns' '$TMP/a.err') -ge 5 ] || ! kill -0 $CS_PID" 60
cs_stop
unset CONNSCOPE_CENSUS
grep '^connscope: census check' "$TMP/a.err" >"$TMP/checks"
checks=$(grep -c 'census check: netns' "$TMP/checks")
assert_eq "$((checks >= 5))" 1 "walk/checked_intervals ($checks)"
# A socket may move between the walk and the dump (a SYN or a zero-window
# probe sent again in those milliseconds): an interval's comparison can
# miss by that. Every one that does not must match whole, and most do.
exact=$(awk '/census check: netns/ && $7 == $9 && $9 == $11 && $13 == 0 && $15 == 0 &&
	     $17 == 0 && $7 >= 40' "$TMP/checks" | wc -l)
assert_eq "$((exact >= checks - 1))" 1 "walk/exact_intervals ($exact of $checks: $(grep -m3 differs "$TMP/checks"))"
line=$(awk '/census check: netns/ && $13 == 0 && $15 == 0 && $17 == 0' "$TMP/checks" | tail -1)
for s in $want_states; do
	n=$(tr ' ' '\n' <<<"$line" | awk -F: -v s="$s" '$1 == s {print $2}')
	assert_eq "$((${n:-0} >= 2))" 1 "walk/state_$s (${n:-0})"
done
# Every timer kind: none, retransmit (SYN_SENT, SYN_RECV), keep-alive,
# TIME_WAIT, zero-window probe.
for t in 0 1 2 3 4; do
	n=$(sed 's/.* timers//' <<<"$line" | tr ' ' '\n' | awk -F: -v t="$t" '$1 == t {print $2}')
	assert_eq "$((${n:-0} >= 2))" 1 "walk/timer_$t (${n:-0})"
done
assert_eq "$(grep -c 'only in the\|differs:' "$TMP/checks" | awk '{print ($1 <= 2)}')" 1 \
	"walk/differences_said ($(grep -m3 'only in the\|differs:' "$TMP/checks"))"
# The books agree with the kernel's view either way.
mism=$(jqn '.agent.books_mismatch_max' "$TMP/a.json")
assert_eq "$mism" 0 walk/books_mismatch

export CONNSCOPE_CENSUS=dump
cs_attach "$TMP/d.json" "$TMP/d.err" -p "$pid" -i 0.5 -d 3 -j ||
	{ fail dump/start "$(cat "$TMP/d.err")"; exit 0; }
unset CONNSCOPE_CENSUS
wait "$CS_PID"
assert_eq "$(grep -c 'census check' "$TMP/d.err")" 0 dump/no_check
for f in a d; do
	jqn '[.processes[0].tcp | to_entries[] | "\(.key)=\(.value)"] + ["tw_host=\(.limits.time_wait_host)"]
	     | join(" ")' "$TMP/$f.json" >"$TMP/$f.states"
done
assert_eq "$(cat "$TMP/a.states")" "$(cat "$TMP/d.states")" walk_and_dump_books_agree
assert_eq "$(grep -c 'established=[1-9]' "$TMP/a.states")" 1 "walk/states_read ($(cat "$TMP/a.states"))"
# The report names the source of its sockets: the walk's reads counted,
# and a run that only dumped says sock_diag alone.
assert_eq "$(jqn '.sources.tcp_reads_walked >= 5' "$TMP/a.json")" true "walk/source_counted ($(jqn -c .sources "$TMP/a.json"))"
assert_eq "$(jqn '.sources.tcp | startswith("the iter/tcp walk")' "$TMP/a.json")" true walk/source_named
assert_eq "$(jqn '[.sources.tcp_reads_walked, (.sources.tcp | startswith("sock_diag +"))] | @text' "$TMP/d.json")" \
	'[0,true]' dump/source_named

# The walk serves from the first interval on: HZ is learnt from two
# (jiffies, clock) pairs a fraction of a second apart (jiffies_hz.c), not
# from passes 2 s apart, so a 2 s run is walked but for its start-up
# snapshot (which dumps). Before, this run dumped all 5 reads. One more
# dump is allowed: a pair whose ticks came late gives no answer, and the
# next interval's pair learns it.
cs_attach "$TMP/s.json" "$TMP/s.err" -p "$pid" -i 0.5 -d 2 -j ||
	{ fail short/start "$(cat "$TMP/s.err")"; exit 0; }
wait "$CS_PID"
assert_eq "$(jqn '.sources | .tcp_reads_walked >= 3 and .tcp_reads_dumped <= 2' "$TMP/s.json")" true \
	"short/walked_from_the_first_interval ($(jqn -c '.sources | [.tcp_reads_walked, .tcp_reads_dumped]' "$TMP/s.json"))"
assert_eq "$(jqn '.agent.books_mismatch_max' "$TMP/s.json")" 0 short/books_mismatch
