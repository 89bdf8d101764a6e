#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# TCP Fast Open's bytes and requests, exact (review-hsend2 S3). Counted at
# tcp:tcp_sendmsg_locked from write_seq, a connection's first look takes
# its sends' base as snd_una - bytes_acked + 1 (tcpstate_sk.bpf.h
# snd_sync): its first sequence number after the SYN, which differs from
# write_seq at that look only when data was queued before it, which is
# Fast Open's: tcp_sendmsg_fastopen puts a request in the SYN before the
# copy loop and its tracepoint. tfo.py, in a network namespace the test
# makes with net.ipv4.tcp_fastopen=3: a connection that asks for the
# cookie, then two whose first request rides in the SYN (sendto with
# MSG_FASTOPEN, and TCP_FASTOPEN_CONNECT), 5 requests of 100 bytes and 5
# answers of 50 in all; both ends traced, every count asserted to the
# byte. The same with sock_send_length counting (the hook hidden from the
# kernel's BTF, fentry off: what a kernel without the tracepoint gets
# where fentry does not load; Debian's 6.12 counts at fentry instead).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
HAVE=$(bpftool btf dump file /sys/kernel/btf/vmlinux | grep -c "'btf_trace_tcp_sendmsg_locked'")

# tfo_case NAME [ATTACH_ARGS...]: in a namespace of its own, so its first
# connection finds no cookie (they are kept per namespace).
tfo_case() {
	local name=$1 J=$TMP/$1.json CPID SPID PORT c s
	shift
	fx_netns "$name"
	inns sysctl -qw net.ipv4.tcp_fastopen=3 ||
		{ fail "$name/tcp_fastopen" "sysctl net.ipv4.tcp_fastopen in $NS failed"; return; }
	FX_WRAP=(ip netns exec "$NS")
	fix_start "$name" "${FX_WRAP[@]}" python3 "$TESTS_DIR/fixtures/tfo.py" &&
		fix_expect "$name" "ready *" 10 || { fail "$name/start" fixture; return; }
	read -r _ CPID SPID PORT <<<"$FIX_LINE"
	cs_attach "$J" "$TMP/$name.err" -p "$CPID,$SPID" -d 120 -i 1 -j "$@" ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return; }
	fix_cmd "$name" go '@(done|error)*' 30
	# Two SYNs whose data the server acked: else Fast Open was not tried.
	assert_eq "$FIX_LINE" "done 2" "$name/syn_data_acked"
	wait_for "closes_done $PORT" 20 || fail "$name/closed" "$(inns ss -tan "( sport = :$PORT or dport = :$PORT )")"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	fix_send "$name" exit
	c="(.processes[] | select(.pid == $CPID) | .reuse)" s="(.processes[] | select(.pid == $SPID) | .reuse)"
	assert_eq "$(jqn "$c | [.connections_opened, .requests, .bytes_sent, .bytes_received] | @tsv" "$J")" \
		"$(printf '3\t5\t500\t250')" "$name/client_exact"
	assert_eq "$(jqn "$s | [.connections_accepted, .requests, .bytes_sent, .bytes_received] | @tsv" "$J")" \
		"$(printf '3\t5\t250\t500')" "$name/server_exact"
	FX_WRAP=()
}

if ((HAVE)); then
	tfo_case tfo
else
	skip tfo "no tcp_sendmsg_locked tracepoint in this kernel's BTF"
fi
HIDDEN=$TMP/vmlinux-no-sendmsg-locked.btf
if "$FIXTURES/btfhide" /sys/kernel/btf/vmlinux "$HIDDEN" tcp_sendmsg_locked; then
	tfo_case hidden_tfo --btf "$HIDDEN"
else
	fail btf_file "btfhide failed"
fi
