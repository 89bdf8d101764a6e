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
# CAP_SYS_ADMIN and RestrictNamespaces=net: setns() into containers'
# network namespaces (their sockets' sock_diag dumps).
caps='CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SYS_ADMIN'
assert_eq "$(grep -cx 'RestrictNamespaces=net' "$UNIT")" 1 unit/namespaces_net_only
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

# The drop-in the unit's comment offers for hosts without containers, as
# written there: it takes CAP_SYS_ADMIN and namespace entry away, and the
# verdict stays OK.
mkdir -p "$TMP/dropin"
{ cat "$UNIT"; sed -n '/systemctl edit/,/^# (docs/s/^#   //p' "$UNIT"; } >"$TMP/dropin/connscope-exporter.service"
systemd-analyze security --offline=yes "$TMP/dropin/connscope-exporter.service" >"$TMP/dropin.txt" 2>&1
# A passed check is marked '✓', or '+' in the C locale run.sh sets.
assert_eq "$(grep -cE '^(✓|\+) CapabilityBoundingSet=~CAP_SYS_ADMIN ' "$TMP/dropin.txt") $(grep -cE '^(✓|\+) RestrictNamespaces=~net ' "$TMP/dropin.txt")" \
	"1 1" unit/dropin_takes_sys_admin_and_netns_away
grep -q 'Overall exposure level for connscope-exporter.service: [0-9.]* OK' "$TMP/dropin.txt" &&
	grep -q 'Overall exposure level for connscope-exporter.service: [0-9.]* OK' "$TMP/security.txt" &&
	ok unit/verdict_ok_both_ways || fail unit/verdict_ok_both_ways "$(grep Overall "$TMP/security.txt" "$TMP/dropin.txt")"

# The rest of the package: bash completion, the dashboards, the docs and
# the licenses the SPDX lines name.
COMP=$P/share/bash-completion/completions/connscope
assert_eq "$(stat -c %a "$COMP" 2>/dev/null)" 644 completion/installed
for f in connscope-overview.json connscope-process.json connscope-agent.json; do
	assert_eq "$(jq -r 'type' "$P/share/connscope/dashboards/$f" 2>/dev/null)" object "dashboards/$f"
done
for f in README.md LICENSE GPL-2.0 BSD-3-Clause commands.md metrics.md; do
	[[ -s $P/share/doc/connscope/$f ]] && ok "docs/$f" || fail "docs/$f" "not in $P/share/doc/connscope"
done
assert_eq "$(grep -c 'GPL-2.0 OR BSD-3-Clause' "$REPO_ROOT/LICENSE")" 1 license/names_the_spdx_expression
assert_eq "$(grep -c 'Version 2, June 1991' "$REPO_ROOT/LICENSES/GPL-2.0")" 1 license/gpl_text
assert_eq "$(grep -c 'Redistribution and use in source and binary forms' "$REPO_ROOT/LICENSES/BSD-3-Clause")" 1 \
	license/bsd_text

# The completion, as bash runs it: commands, a command's options (from its
# --help), --fail-on's values, the load generator after `run --`.
complete_words() {
	PATH=$P/sbin:$PATH bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		_connscope; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@" | sort | tr '\n' ' '
}
assert_eq "$(complete_words connscope r)" "run " completion/command
assert_eq "$(complete_words connscope run --fail)" "--fail-on " completion/option_from_help
assert_eq "$(complete_words connscope run --fail-on "")" "critical warning " completion/fail_on_values
assert_eq "$(complete_words connscope run -- connscop | grep -c connscope)" 1 completion/command_after_dashdash
assert_eq "$(complete_words connscope attach --per)" "--per-transition " completion/attach_option

# make uninstall takes every file back out.
make -C "$REPO_ROOT" --no-print-directory -s uninstall PREFIX="$P" >"$TMP/unmake.log" 2>&1
assert_eq "$?" 0 make_uninstall
assert_eq "$(find "$P" -type f | head -3 | tr '\n' ' ')" "" uninstall/no_file_left
