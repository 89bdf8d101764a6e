#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The guest side of tests/bench/getpid_kernels.sh (run by the guest's
# /init in place of tests/kernels/guest.sh): `loadgen getpid -n 1000`
# unattached and with each connscope binary the host packed as
# fixtures/cs_LABEL attached to an idle tcpfix server and client, in
# ROUNDS rounds, the kinds in rotating order. The agent is stopped
# (SIGSTOP) during each loop: only its programs in the kernel cost
# anything. Results: "ok - getpid/KERNEL/LABEL rN calls_per_s=R" lines,
# and once a binary "ok - getpid/KERNEL/LABEL hooks ..." (its classic
# tracepoint programs, its sys_enter/sys_exit links and its fexit links,
# from its fdinfo).
set -u
source "$REPO_ROOT/tests/lib.sh"
source "$REPO_ROOT/tests/fixture.sh"
LIB_SCRIPT="getpid/$(uname -r)"
WAIT_FOR_POLL_S=0.2
TMP=$(lib_tmpdir)
ROUNDS=8

hooks() {	# hooks PID: fixture.sh's agent_hooks, named
	local tp sys fexit

	read -r tp sys fexit < <(agent_hooks "$1")
	echo "tracepoint_progs $tp syscall_links $sys fexit_links $fexit"
}

loop() {	# loop LABEL ROUND
	ok "$1 r$2 $("$FIXTURES/loadgen" getpid -n 1000 | grep -o 'calls_per_s=[0-9]*')"
}

attached() {	# attached BIN LABEL ROUND
	if CONNSCOPE=$1 cs_attach "$TMP/$2.json" "$TMP/$2.err" -p "$FX_PID_srv,$FX_PID_cli" -i 1 -j; then
		(($3 == 1)) && ok "$2 hooks $(hooks "$CS_PID")"
		kill -STOP "$CS_PID"
		loop "$2" "$3"
		kill -CONT "$CS_PID"
		cs_stop
	else
		fail "$2 r$3" "attach: $(tail -c 300 "$TMP/$2.err" | tr '\n' ' ')"
	fi
}

port=$("$FIXTURES/tcpfix" freeport)
fx_start srv server -p "$port" && fx_start cli client -p "$port" || fail start tcpfix
kinds=(unattached)
for b in "$FIXTURES"/cs_*; do
	[[ -x $b ]] && kinds+=("${b##*/cs_}")
done
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#kinds[@]}; i++)); do
		k=${kinds[(i + r) % ${#kinds[@]}]}
		if [[ $k == unattached ]]; then
			loop "$k" "$r"
		else
			attached "$FIXTURES/cs_$k" "$k" "$r"
		fi
	done
done
fx_stop cli; fx_stop srv
