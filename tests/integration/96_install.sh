#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# make install, as users install agents: the binary, connscope(8), and a
# systemd unit for the exporter that runs it as a dynamic user with only
# the capabilities 95_least_privilege proves enough, inside systemd's
# sandbox. The unit is checked with systemd-analyze verify and security
# (offline: no service is started on this machine).
set -u
source "$TESTS_DIR/lib.sh"

TMP=$(lib_tmpdir)
P=$TMP/prefix
UNIT=$P/lib/systemd/system/connscope-exporter.service
MAN=$P/share/man/man8/connscope.8

make -C "$REPO_ROOT" --no-print-directory -s install PREFIX="$P" >"$TMP/make.log" 2>&1
if [[ $? -eq 0 ]]; then ok make_install; else fail make_install "$(tail -c 300 "$TMP/make.log")"; fi
assert_eq "$(stat -c %a "$P/sbin/connscope" 2>/dev/null)" 755 binary/installed
assert_eq "$("$P/sbin/connscope" version 2>&1 | grep -c connscope)" 1 binary/runs
assert_eq "$(stat -c %a "$MAN" 2>/dev/null)" 644 man/installed
if MANWIDTH=80 man -l "$MAN" >"$TMP/man.txt" 2>"$TMP/man.err" && [[ -s $TMP/man.txt ]]; then
	ok man/renders
else
	fail man/renders "$(head -c 300 "$TMP/man.err")"
fi
assert_eq "$(grep -cF "$P/lib/systemd/system/connscope-exporter.service" "$MAN")" 1 man/names_the_unit
for want in 'CAP_BPF, CAP_PERFMON' CAP_DAC_READ_SEARCH CAP_SYS_PTRACE CAP_NET_ADMIN 'EXIT STATUS'; do
	if grep -qF -- "$want" "$TMP/man.txt"; then
		ok "man/says/${want//[^A-Za-z_]/_}"
	else
		fail "man/says/${want//[^A-Za-z_]/_}" "'$want' not in the rendered page"
	fi
done
assert_eq "$(grep -c '^ExecStart='"$P"'/sbin/connscope exporter --all --listen 127.0.0.1:9477$' "$UNIT")" 1 \
	unit/execstart_installed_path
caps='CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_SYS_PTRACE CAP_DAC_READ_SEARCH'
assert_eq "$(grep -c "^CapabilityBoundingSet=$caps\$" "$UNIT")" 1 unit/bounding_set
assert_eq "$(grep -c "^AmbientCapabilities=$caps\$" "$UNIT")" 1 unit/ambient_set
for key in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes; do
	assert_eq "$(grep -cx "$key" "$UNIT")" 1 "unit/$key"
done
systemd-analyze verify --man=no "$UNIT" >"$TMP/verify.txt" 2>&1
if [[ $? -eq 0 ]]; then
	ok unit/systemd_analyze_verify
else
	fail unit/systemd_analyze_verify "$(head -c 300 "$TMP/verify.txt")"
fi
systemd-analyze security --offline=yes "$UNIT" >"$TMP/security.txt" 2>&1
level=$(grep -o 'Overall exposure level for connscope-exporter.service: [0-9.]*' "$TMP/security.txt" | awk '{print $NF}')
if [[ -n $level ]] && awk -v l="$level" 'BEGIN {exit !(l < 4.0)}'; then
	ok "unit/systemd_analyze_security_exposure_$level"
else
	fail unit/systemd_analyze_security "exposure '$level' (want < 4.0): $(tail -3 "$TMP/security.txt")"
fi
