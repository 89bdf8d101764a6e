#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# --container with an id prefix two running containers share: one line
# naming both (their short ids) and the fix, exit 2, whatever order the
# cgroup tree lists them in. Containers are found by their cgroups
# (libpod-<id>.scope), so the test makes such cgroups itself, with others
# of unrelated ids beside them, in a directory of its own under the
# cgroup v2 mount, removed at exit.
set -u
source "$TESTS_DIR/lib.sh"
require_root

MNT=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
[[ -d $MNT ]] || { fail cgroup2 "no cgroup v2 mount"; exit 1; }
P=$MNT/connscope-prefix-$$
mkdir "$P" || { fail mkdir "$P"; exit 1; }
# hexid N SEED: N hex digits from SEED (sha256, like the runtimes' ids);
# fixed seeds, so the tree lists them in the same order every run.
hexid() { printf '%s' "$2" | sha256sum | cut -c1-"$1"; }
pre=$(hexid 10 connscope-prefix)
A=$pre$(hexid 54 connscope-a) B=$pre$(hexid 54 connscope-b)
# Each in a directory of its own among five unrelated ones (the tree is
# read depth first, each directory in its hash order).
mkdir "$P/x1" "$P/x2" || fail mkdir "$P/x1 $P/x2"
on_exit "rmdir '$P'/x?/*.scope '$P'/x? '$P' 2>/dev/null"
for id in "$A" $(for i in 1 2 3 4 5; do hexid 64 "connscope-other-$i"; done); do
	mkdir "$P/x1/libpod-$id.scope" || fail mkdir "$id"
done
for id in "$B" $(for i in 6 7 8 9 10; do hexid 64 "connscope-other-$i"; done); do
	mkdir "$P/x2/libpod-$id.scope" || fail mkdir "$id"
done

TMP=$(lib_tmpdir)
"$CONNSCOPE" attach --container "$pre" -d 1 >/dev/null 2>"$TMP/raw.err"
# One message, wrapped at 80 columns (continuation lines indented).
st=$?
msg_join "$TMP/raw.err" >"$TMP/err"
assert_eq "$st $(wc -l <"$TMP/err")" "2 1" exit_2_one_message
fits80 message_fits_80 "$TMP/raw.err"
grep -q "that id prefix matches 2 running containers" "$TMP/err" && ok says_two || fail says_two "$(cat "$TMP/err")"
grep -q "${A:0:12}" "$TMP/err" && grep -q "${B:0:12}" "$TMP/err" && ok names_both ||
	fail names_both "want ${A:0:12} and ${B:0:12}: $(cat "$TMP/err")"
grep -q "give more of the id, or the name" "$TMP/err" && ok says_the_fix || fail says_the_fix "$(cat "$TMP/err")"
# More of the id: that one container, past the resolution (no container
# processes to trace: the run ends on its own).
"$CONNSCOPE" attach --container "${A:0:16}" -d 1 >/dev/null 2>"$TMP/one.err"
grep -q "that id prefix matches" "$TMP/one.err" && fail longer_prefix_resolves "$(cat "$TMP/one.err")" ||
	ok longer_prefix_resolves

# The container label where a process is in one (its cgroup; no runtime
# knows these ids, so the short id): attach's JSON and fdleak's alike.
spawn_bg sleep 60
SPID=$BG_PID
echo "$SPID" >"$P/x1/libpod-$A.scope/cgroup.procs" || fail move "pid $SPID into A's scope"
# Back out before the scope is removed at exit (rmdir needs it empty).
on_exit "echo $SPID >'$MNT/cgroup.procs' 2>/dev/null; kill $SPID 2>/dev/null"
"$CONNSCOPE" attach -p "$SPID" -j -d 1 >"$TMP/a.json" 2>"$TMP/a.err"
assert_eq "$(jqn '.processes[0].container' "$TMP/a.json")" "${A:0:12}" label/attach_json
"$CONNSCOPE" fdleak -p "$SPID" -j -i 0.5 -d 1 >"$TMP/f.json" 2>"$TMP/f.err"
assert_eq "$(jqn '.processes[0].container' "$TMP/f.json")" "${A:0:12}" label/fdleak_json
