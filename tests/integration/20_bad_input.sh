#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Bad input: one clear message on stderr naming the problem and the fix,
# the documented nonzero exit status, and nothing on stdout.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)

# expect NAME STATUS PATTERN CMD...: exit status, one stderr message (its
# wrapped lines joined) matching the extended regex PATTERN, every line of
# it within 80 columns, empty stdout.
expect() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	assert_eq "$rc" "$want" "$name/exit_status"
	msg_join "$TMP/err" >"$TMP/msg"
	if grep -Eq -- "$pat" "$TMP/msg" && [ "$(wc -l <"$TMP/msg")" -eq 1 ]; then
		ok "$name/message"
	else
		fail "$name/message" "stderr: $(cat "$TMP/err")"
	fi
	fits80 "$name" "$TMP/err" "$TMP"
	assert_eq "$(wc -c <"$TMP/out")" 0 "$name/no_stdout"
}

# A pid that does not exist: the highest possible one is free on any test box.
NOPID=$(cat /proc/sys/kernel/pid_max)
while [ -e "/proc/$NOPID" ]; do NOPID=$((NOPID - 1)); done

expect no_such_pid 1 "no such process: $NOPID .*pgrep" "$CONNSCOPE" attach -p "$NOPID" -d 1
expect summary_no_such_pid 1 "no such process: $NOPID" "$CONNSCOPE" summary -p "$NOPID"
expect bad_duration 2 "-d 'abc': expected seconds between" "$CONNSCOPE" attach -p $$ -d abc
expect zero_interval 2 "-i '0': expected seconds between 0.1" "$CONNSCOPE" attach -p $$ -i 0
expect negative_duration 2 "-d '-5': expected seconds" "$CONNSCOPE" attach -p $$ -d -5
expect bad_pid 2 "-p 'abc': expected a process id" "$CONNSCOPE" attach -p abc
expect fd_sites_no_fd 2 "--fd-sites traces fds and --no-fd turns fds off" "$CONNSCOPE" attach -p $$ --fd-sites --no-fd
expect leak_age_no_sites 2 "--leak-age .*only --fd-sites traces: add --fd-sites" "$CONNSCOPE" attach -p $$ --leak-age 5
expect bad_pid_list 2 "-p '1,,2': expected a process id" "$CONNSCOPE" attach -p 1,,2
expect trailing_comma 2 "-p '12,': expected a process id" "$CONNSCOPE" summary -p 12,
expect no_pid 2 "which process\? give -p PID" "$CONNSCOPE" attach -d 1
expect ringbuf_not_pow2 2 "--ringbuf-size 5000: must be a power of two" \
	"$CONNSCOPE" attach -p $$ --ringbuf-size 5000
expect unknown_command 2 "unknown command 'frobnicate'" "$CONNSCOPE" frobnicate
expect unknown_option 2 ".-x. is unknown or lacks its value" "$CONNSCOPE" attach -x
expect stray_argument 2 "unexpected argument 'extra'" "$CONNSCOPE" summary extra
expect btf_missing 1 "cannot read BTF file /nonexistent/vmlinux: No such file.*--btf|BTFHub" \
	"$CONNSCOPE" attach -p $$ -d 1 --btf /nonexistent/vmlinux
mkdir -p "$TMP/empty-tracefs"
expect tracepoint_missing 1 "tracepoint sock:inet_sock_set_state not found" \
	env CONNSCOPE_TRACEFS="$TMP/empty-tracefs" "$CONNSCOPE" attach -p $$ -d 1
# Not root: a real unprivileged user (setpriv drops every capability).
expect not_root 1 "needs root .*run it with sudo" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CONNSCOPE" attach -p $$ -d 1

# The traced process exits during the window: a message, exit status 3,
# and still one complete report.
port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
cs_attach "$TMP/gone.json" "$TMP/gone.err" -p "$FX_PID_cli" -j -i 0.2 ||
	fail "target_exits/attach" "$(cat "$TMP/gone.err")"
assert_eq "$(fx_cmd cli "churn 3")" "churned 3" "target_exits/churned"
fix_send cli exit
wait "$CS_PID"
assert_eq "$?" 3 "target_exits/exit_status"
if grep -Eq "process $FX_PID_cli \(tcpfix\) exited after [0-9.]+ s" "$TMP/gone.err"; then
	ok "target_exits/message"
else
	fail "target_exits/message" "$(cat "$TMP/gone.err")"
fi
assert_eq "$(jq -r ".processes[] | select(.pid == $FX_PID_cli) | [.exited, .totals.connections_opened] | @tsv" "$TMP/gone.json")" \
	"$(printf 'true\t3')" "target_exits/report_complete"
assert_eq "$(jq -r .run.end_reason "$TMP/gone.json")" "target exited" "target_exits/end_reason"
