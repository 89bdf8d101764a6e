#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A traced process that accepts on a unix socket loses nothing: where the
# accept() exit tracepoints name who took a listener's child (this
# kernel's --per-transition; kernels where fexit on inet_csk_accept does
# not load), the fd accept() returned is a unix socket, not TCP, and not
# one of ours. Before, each such accept was counted in accept_unresolved,
# a loss ("accepted sockets not resolved"): 5 for 5 unix accepts.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
K=5

# The fixture's stdin is its command pipe: the program goes in a file.
cat >"$TMP/ux.py" <<'PY'
import os, socket, sys
path, k = sys.argv[1], int(sys.argv[2])
l = socket.socket(socket.AF_UNIX)
l.bind(path)
l.listen(16)
print("ready", os.getpid(), flush=True)
sys.stdin.readline()
for _ in range(k):
    c = socket.socket(socket.AF_UNIX)
    c.connect(path)
    a, _ = l.accept()
    a.close()
    c.close()
print("accepted", k, flush=True)
sys.stdin.readline()
PY
fix_start ux python3 -u "$TMP/ux.py" "$TMP/ux.sock" "$K"
fix_expect ux 'ready *' 10 || { fail setup/fixture "no ready line"; exit 1; }
pid=${FIX_LINE#ready }

if cs_attach "$TMP/a.json" "$TMP/a.err" -p "$pid" --per-transition -i 0.2 -j; then
	fix_send ux go
	fix_expect ux 'accepted *' 10
	assert_eq "$FIX_LINE" "accepted $K" per_transition/accepted
	cs_stop
	assert_eq "$?" 0 per_transition/exit_status
	assert_eq "$(jqn '.run.accept_hook' "$TMP/a.json")" \
		"tracepoint/syscalls/sys_exit_accept, sys_exit_accept4" per_transition/accept_hook
	assert_eq "$(jqn '.agent.accept_unresolved' "$TMP/a.json")" 0 per_transition/unix_not_unresolved
else
	fail per_transition/attach "$(tail -c 600 "$TMP/a.err")"
fi
fix_send ux exit
