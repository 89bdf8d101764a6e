#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Storm: 3,000 connections made and closed as fast as the fixture can on
# loopback (bounded in count; a 60 s bound on the time) while attached to
# both ends. Afterwards the books agree with the kernel: per-process
# established and orphan counts equal what sock_diag (ss) reports for the
# port, the books-vs-kernel gap is 0, every connection is
# counted once on each side unless events were lost, and then the loss is
# exactly what the BPF side counted.
#
# Known gap, so TIME_WAIT is not compared: on a host with many TIME_WAIT
# sockets (tens of thousands from other work, or STORM_N=20000 here) and
# tcp_tw_reuse=2 (loopback tuples reused), the books' live TIME_WAIT count
# drifts below the kernel's by a few percent (10,825 vs 11,702; 2,494 vs
# 3,000 on a busy host) while entered/ended counts are exact, and
# books_mismatch cannot see it: both sides of that comparison come from
# the books' own tuples. Left to the TIME_WAIT code's owner (issue 16).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=${STORM_N:-3000}
J=$TMP/storm.json

port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
cs_attach "$J" "$TMP/storm.err" -p "$FX_PID_cli,$FX_PID_srv" -j -i 0.5 ||
	fail attach "$(cat "$TMP/storm.err")"
start=$SECONDS
assert_eq "$(fx_cmd cli "churn $N" 60)" "churned $N" churned
echo "storm: $N connections in $((SECONDS - start)) s" >&2
cs_stop >/dev/null
# The kernel's view right after the agent's last reconcile (no TIME_WAIT
# of the storm can have expired yet: they last 60 s).
ss_count() { ss -Htan state "$1" "( sport = :$port or dport = :$port )" | wc -l; }
k_tw=$(ss_count time-wait)
k_est=$(ss_count established)
k_orph=$(ss -Htano "( sport = :$port or dport = :$port )" | grep -c 'orphan' || true)

both=".processes[] | select(.pid == $FX_PID_cli or .pid == $FX_PID_srv)"
lost=$(jq -r '.agent.events_lost' "$J")
# Not asserted (the known gap above): said on stderr for whoever looks.
echo "storm: TIME_WAIT books $(jq -r "[$both | .tcp.time_wait] | add" "$J") kernel $k_tw" >&2
assert_eq "$(jq -r "[$both | .tcp.established] | add" "$J")" "$k_est" books_vs_kernel/established
assert_eq "$(jq -r "[$both | .orphans.now] | add" "$J")" "$k_orph" books_vs_kernel/orphans
assert_eq "$(jq -r '.agent.books_mismatch_last' "$J")" 0 books_vs_kernel/no_gap
assert_eq "$(jq -r '.agent.losses.tcp_events' "$J")" "$lost" losses/equal_bpf_count
if [[ $lost == 0 ]]; then
	assert_eq "$(jq -r "$both | select(.pid == $FX_PID_cli) | .totals.connections_opened" "$J")" "$N" counts/opened
	assert_eq "$(jq -r "$both | select(.pid == $FX_PID_srv) | .totals.connections_accepted" "$J")" "$N" counts/accepted
	assert_eq "$(jq -r "[$both | .totals.time_wait_entered] | add" "$J")" "$N" counts/time_wait_entered
else
	# Lost events make counts low, never high, and are said first.
	opened=$(jq -r "$both | select(.pid == $FX_PID_cli) | .totals.connections_opened" "$J")
	if ((opened <= N)); then ok counts/opened_not_above; else fail counts/opened_not_above "$opened > $N"; fi
fi
