#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The kernel-side map of traced TIME_WAIT sockets (tw_owners) is as large
# as a network namespace lets TIME_WAIT be (net.ipv4.tcp_max_tw_buckets)
# or as --max-time-wait says; when it fills, the TIME_WAIT not followed
# are counted as their own loss (time_wait_map_full), which names that
# flag, not the owner map. Before: 65,536 entries whatever the namespace
# allowed, and a full one counted as owner_map_full ("raise
# --max-sockets", which did not change it). In a network namespace of the
# test's own, with tcp_tw_reuse=0 so no TIME_WAIT ends during the run.
# The map is the timer programs' (--tw-timers); without them (the census,
# by default) it is the least the kernel allows: one entry.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=1100 MAX=1024

# map_max PID NAME: max_entries of the BPF map NAME that PID holds.
map_max() {
	local id
	for id in $(awk '/^map_id:/ {print $2}' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un); do
		if [ "$(bpftool map show id "$id" -j 2>/dev/null | jq -r .name)" = "$2" ]; then
			bpftool map show id "$id" -j | jq .max_entries
			return
		fi
	done
	echo "no map $2"
}

fx_netns twmap
inns sysctl -qw net.ipv4.tcp_max_tw_buckets=200000
inns sysctl -qw net.ipv4.tcp_tw_reuse=0
FX_WRAP=(ip netns exec "$NS")
CS_WRAP=(ip netns exec "$NS")
fx_start srv server -p 8080 && fx_start cli client -p 8080 || { fail start fixtures; exit 1; }

# Sized from the namespace the agent runs in.
cs_attach "$TMP/ns.json" "$TMP/ns.err" -p "$FX_PID_cli" -j -i 0.2 --tw-timers ||
	{ fail ns/attach "$(cat "$TMP/ns.err")"; exit 1; }
assert_eq "$(map_max "$CS_PID" tw_owners)" 200000 ns/sized_from_tcp_max_tw_buckets
cs_stop
assert_eq "$?" 0 ns/exit_status
cs_attach "$TMP/census.json" "$TMP/census.err" -p "$FX_PID_cli" -j -i 0.2 ||
	{ fail census/attach "$(cat "$TMP/census.err")"; exit 1; }
assert_eq "$(map_max "$CS_PID" tw_owners)" 1 census/no_kernel_memory_for_time_wait
cs_stop
assert_eq "$?" 0 census/exit_status

# Sized by the flag, and filled: more TIME_WAIT than it holds. The
# socket-storage mode reports JSON, the per-transition one text and
# Prometheus (what a user reads names the flag to raise).
for m in sk pt; do
	flags=(-j --tw-timers)
	[ "$m" = pt ] && flags=(--tw-timers --per-transition --prom "$TMP/full_pt.prom")
	O=$TMP/full_$m.out
	cs_attach "$O" "$TMP/full_$m.err" -p "$FX_PID_cli" -i 0.2 -H --max-time-wait $MAX "${flags[@]}" ||
		{ fail "$m/attach" "$(cat "$TMP/full_$m.err")"; continue; }
	assert_eq "$(map_max "$CS_PID" tw_owners)" $MAX "$m/sized_by_flag"
	assert_eq "$(fx_cmd cli "churn $N")" "churned $N" "$m/churned"
	closing() { inns ss -Htan state fin-wait-1 state fin-wait-2 state closing | wc -l; }
	wait_for '[ "$(closing)" -eq 0 ]' 30 || fail "$m/quiet" "$(closing) sockets still closing"
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	if [ "$m" = sk ]; then
		assert_eq "$(jqn ".processes[] | select(.pid == $FX_PID_cli) | .totals.time_wait_entered" "$O")" $N "$m/entered"
		assert_eq "$(jqn '[.agent.time_wait_map_full, .agent.losses.time_wait_map_full, .agent.owner_map_full, .agent.losses.owner_map_full] | @tsv' "$O")" \
			"$(printf '%s\t%s\t0\t0' $((N - MAX)) $((N - MAX)))" "$m/tw_map_full_counted_apart"
	else
		assert_eq "$(awk '$1 == "connscope_agent_losses_total{what=\"time_wait_map_full\"}" {print $2}' "$TMP/full_pt.prom"):$(awk '$1 == "connscope_agent_losses_total{what=\"owner_map_full\"}" {print $2}' "$TMP/full_pt.prom")" \
			"$((N - MAX)):0" "$m/tw_map_full_counted_apart"
		# The report's LOST: line and its losses section.
		# Wrapped at 80 columns: counted in the text run together.
		assert_eq "$(tr -s '\n ' '  ' <"$O" | grep -o 'TIME_WAIT map full: raise --max-time-wait' | wc -l):$(lost_paragraph "$O" | grep -c '^LOST: .*TIME_WAIT map full: raise --max-time-wait')" \
			2:1 "$m/text_names_the_flag"
	fi
done
fx_stop cli; fx_stop srv
