# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# shellcheck shell=bash source=tests/lib.sh
# The tcpfix fixture itself: every later test trusts it to produce exact
# connection lifecycles, so check them against the kernel's view (ss) first.
# Needs no root: plain loopback sockets in the current namespace.
. "$(dirname "$0")/../lib.sh"

TCPFIX=$FIXTURES/tcpfix
if [[ ! -x $TCPFIX ]]; then
	fail tcpfix_built "$TCPFIX missing (make .output/fixtures/tcpfix)"
	exit 1
fi

# tw_count FILTER: TIME_WAIT sockets matching an ss filter expression.
tw_count() {
	ss -Htan state time-wait "( $1 )" | wc -l
}

# wait_stats FIX WANT: poll the server's counters until they read WANT.
wait_stats() {
	wait_for "fix_cmd $1 stats 'stats *' 5 && [[ \$FIX_LINE == '$2' ]]" 10
}

# start_server NAME ARGS...: a tcpfix server; its port ends up in PORT.
start_server() {
	local name=$1
	shift
	local pid

	fix_start "$name" "$TCPFIX" server "$@" || return 1
	fix_expect "$name" 'listening *' 5 || return 1
	read -r _ PORT pid <<<"$FIX_LINE"
	local var=${name}_PID
	[[ $pid == "${!var}" ]] || { echo "pid $pid, want ${!var}" >&2; return 1; }
}

start_client() {
	fix_start "$1" "$TCPFIX" client "${@:3}" -p "$2" || return 1
	fix_expect "$1" 'ready *' 5
}

# stop NAME: `exit` on stdin must end it with status 0.
stop() {
	local var=${1}_PID rc

	fix_send "$1" exit
	wait "${!var}"
	rc=$?
	[[ $rc -eq 0 ]] || echo "$1 exited with $rc" >&2
	return "$rc"
}

for fam in 4 6; do
	flag=
	[[ $fam == 6 ]] && flag=-6

	# Client closes first: TIME_WAIT on the client's ephemeral ports.
	# A port from free_port (the helper under test too); the other cases
	# let the server bind port 0, which cannot race.
	t=churn_v$fam
	if port=$(free_port $flag) && [[ $port =~ ^[0-9]+$ ]] &&
	   start_server srv$fam $flag -p "$port" && [[ $PORT == "$port" ]] &&
	   start_client cli$fam "$PORT" $flag; then
		if ! fix_cmd cli$fam "churn 20" 'churned *' 30; then
			fail $t "no reply to churn 20"
		elif [[ $FIX_LINE != "churned 20" ]]; then
			fail $t "client: $FIX_LINE"
		elif ! wait_stats srv$fam "stats accepted 20 closed 20 open 0"; then
			fail $t "server: $FIX_LINE, want accepted 20 closed 20 open 0"
		elif ! wait_for "[[ \$(tw_count 'sport = :$PORT or dport = :$PORT') -eq 20 ]]" 10; then
			fail $t "$(tw_count "sport = :$PORT or dport = :$PORT") TIME_WAIT sockets on port $PORT, want 20"
		else
			assert_eq "$(tw_count "sport = :$PORT")" 0 "${t}_no_tw_on_server_side"
			ok $t
		fi
		stop cli$fam && stop srv$fam
		assert_eq $? 0 ${t}_exit_status
	else
		fail $t "could not start server and client (port '${port:-}')"
	fi

	# Server closes first (--close-first): TIME_WAIT on the server port.
	t=churn_passive_v$fam
	if start_server psrv$fam $flag --close-first &&
	   start_client pcli$fam "$PORT" $flag; then
		if ! fix_cmd pcli$fam "churn-passive 20" '@(churned *|error *)' 30; then
			fail $t "no reply to churn-passive 20"
		elif [[ $FIX_LINE != "churned 20" ]]; then
			fail $t "client: $FIX_LINE"
		elif ! wait_stats psrv$fam "stats accepted 20 closed 20 open 0"; then
			fail $t "server: $FIX_LINE, want accepted 20 closed 20 open 0"
		elif ! wait_for "[[ \$(tw_count 'sport = :$PORT') -eq 20 ]]" 10; then
			fail $t "$(tw_count "sport = :$PORT") TIME_WAIT sockets with local port $PORT, want 20"
		else
			assert_eq "$(tw_count "dport = :$PORT")" 0 "${t}_no_tw_on_client_side"
			ok $t
		fi
		stop pcli$fam && stop psrv$fam
		assert_eq $? 0 ${t}_exit_status
	else
		fail $t "could not start server and client"
	fi

	# Held connections: open keeps them established, close releases all.
	t=open_close_v$fam
	if start_server osrv$fam $flag && start_client ocli$fam "$PORT" $flag; then
		if ! fix_cmd ocli$fam "open 50" '@(opened *|error *)' 30 ||
		   [[ $FIX_LINE != "opened 50" ]]; then
			fail $t "open 50: ${FIX_LINE:-no reply}"
		elif ! wait_stats osrv$fam "stats accepted 50 closed 0 open 50"; then
			fail $t "server after open: $FIX_LINE"
		elif ! wait_for "[[ \$(ss -Htan state established '( dport = :$PORT )' | wc -l) -eq 50 ]]" 10; then
			fail $t "$(ss -Htan state established "( dport = :$PORT )" | wc -l) established, want 50"
		elif ! fix_cmd ocli$fam close 'closed *' 10 || [[ $FIX_LINE != "closed 50" ]]; then
			fail $t "close: ${FIX_LINE:-no reply}"
		elif ! wait_stats osrv$fam "stats accepted 50 closed 50 open 0"; then
			fail $t "server after close: $FIX_LINE"
		else
			ok $t
		fi
		stop ocli$fam && stop osrv$fam
		assert_eq $? 0 ${t}_exit_status
	else
		fail $t "could not start server and client"
	fi
done

# Bad usage is an error exit with a message, not a hang or a crash.
t=bad_arguments
err=$("$TCPFIX" client 2>&1 </dev/null)
rc=$?
if [[ $rc -ne 0 && -n $err ]] && ! "$TCPFIX" server -p 70000 </dev/null 2>/dev/null &&
   ! "$TCPFIX" nonsense </dev/null 2>/dev/null; then
	ok $t
else
	fail $t "client without -p: status $rc, stderr '$err'"
fi

# Everything above was stopped and reaped: no tcpfix of ours may remain.
assert_eq "$(jobs -rp | wc -l)" 0 no_children_left
