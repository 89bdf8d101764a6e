# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope-specific test helpers on top of tests/lib.sh (source it first).

FX_WRAP=()

# fx_start NAME ARGS...: a tcpfix process driven over pipes (lib.sh's
# fix_start); waits for its first line ("listening PORT PID" / "ready PID")
# and sets FX_PID_NAME.
fx_start() {
	local name=$1 pidvar
	shift
	# FX_WRAP: a prefix such as (ip netns exec NS), which execs in place.
	fix_start "$name" "${FX_WRAP[@]}" "$FIXTURES/tcpfix" "$@" || return 1
	pidvar=${name}_PID
	printf -v "FX_PID_$name" %s "${!pidvar}"
	fix_expect "$name" "*" 10 || { echo "fixture $name did not start" >&2; return 1; }
}

# fx_cmd NAME LINE [TIMEOUT]: send a command, print its reply line.
fx_cmd() {
	fix_send "$1" "$2" && fix_expect "$1" "*" "${3:-60}" && echo "$FIX_LINE"
}

fx_stop() {
	fix_send "$1" exit 2>/dev/null
	local pidvar=${1}_PID
	wait "${!pidvar}" 2>/dev/null
	return 0
}

# The number of TIME_WAIT sockets with PORT at either end (kernel truth).
tw_on_port() {
	ss -Htan state time-wait "( sport = :$1 or dport = :$1 )" | wc -l
}

# cs_attach OUT ERR ARGS...: connscope attach in the background; returns
# once it printed "tracing" (attached and seeded), or failed. Sets CS_PID.
CS_WRAP=()
cs_attach() {
	local out=$1 err=$2
	shift 2
	# CS_WRAP: e.g. (ip netns exec NS): sock_diag and /proc/sys are per netns.
	spawn_bg "${CS_WRAP[@]}" "$CONNSCOPE" attach "$@" >"$out" 2>"$err"
	CS_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$err' || ! kill -0 $CS_PID 2>/dev/null" 30
	grep -q '^connscope: tracing' "$err"
}

# Stop it as a user would (Ctrl-C) and return its exit status.
cs_stop() {
	kill -INT "$CS_PID" 2>/dev/null
	wait "$CS_PID"
}
