#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The man pages: connscope(8) and one page a command, made from the
# command's --help (dist/man/mkman.sh). Every command `connscope --help`
# lists has a page; each renders with `man --warnings -l` without a warning
# and within 80 columns, as its --help does; the options its --help lists
# are exactly the ones its page shows, both ways; --help ends with 2-4
# examples and the page has them; make install puts every page in place.
# -V is the version.
set -u
source "$TESTS_DIR/lib.sh"

TMP=$(lib_tmpdir)
MANDIR=$REPO_ROOT/.output/man

# The commands, from the top-level help itself ("  NAME ..." lines).
mapfile -t CMDS < <("$CONNSCOPE" --help | awk '/^  [a-z]/ {print $1}' | grep -v '^version,\?$')
assert_eq "${CMDS[*]}" "summary attach fdleak exporter doctor run diff demo" commands_listed

# The options a text names: -x and --long-name tokens at a word's start.
options() {
	grep -oE '(^|[][ ,|(])--?[a-zA-Z][-a-zA-Z]*' "$1" | sed 's/^[][ ,|(]//' | sort -u
}

render() {
	MANWIDTH=80 man --warnings -l "$1" 2>"$2" | col -bx
}

for c in "${CMDS[@]}"; do
	page=$MANDIR/connscope-$c.8
	if [[ ! -f $page ]]; then
		fail "$c/page" "$page missing (make $page)"
		continue
	fi
	render "$page" "$TMP/$c.err" >"$TMP/$c.txt"
	assert_eq "$(head -c 300 "$TMP/$c.err")" "" "$c/renders_without_warnings"
	assert_eq "$(awk 'length > 80' "$TMP/$c.txt" | head -1)" "" "$c/fits_80_columns"
	# --help is output asked for: on stdout, exit 0, nothing on stderr
	# (a pager or `| less` gets it all); -h and `connscope help CMD` the same.
	"$CONNSCOPE" "$c" --help >"$TMP/$c.help" 2>"$TMP/$c.herr"
	assert_eq "$?" 0 "$c/help_exit_status"
	assert_eq "$(head -c 300 "$TMP/$c.herr")" "" "$c/help_nothing_on_stderr"
	[[ -s $TMP/$c.help ]] && ok "$c/help_on_stdout" || fail "$c/help_on_stdout" "empty"
	for h in "$c -h" "help $c"; do
		# shellcheck disable=SC2086 # two words
		"$CONNSCOPE" $h >"$TMP/$c.h2" 2>"$TMP/$c.h2err"
		assert_eq "$?:$(head -c 300 "$TMP/$c.h2err")" 0: "$c/help_as '$h'"
		cmp -s "$TMP/$c.help" "$TMP/$c.h2" && ok "$c/same_help '$h'" ||
			fail "$c/same_help '$h'" "$(diff "$TMP/$c.help" "$TMP/$c.h2" | head -5)"
	done
	# --help is read in a terminal too: doctor's usage line and
	# exporter's --fd-sites were 81 columns.
	assert_eq "$(awk 'length > 80' "$TMP/$c.help" | head -1)" "" "$c/help_fits_80_columns"
	# Both ways: what --help lists and the page does not, and the reverse.
	options "$TMP/$c.help" >"$TMP/$c.hopts"
	options "$TMP/$c.txt" >"$TMP/$c.mopts"
	assert_eq "$(comm -23 "$TMP/$c.hopts" "$TMP/$c.mopts" | tr '\n' ' ')" "" "$c/help_options_in_page"
	assert_eq "$(comm -13 "$TMP/$c.hopts" "$TMP/$c.mopts" | tr '\n' ' ')" "" "$c/page_options_in_help"
	[[ $(wc -l <"$TMP/$c.hopts") -ge 2 ]] && ok "$c/has_options" || fail "$c/has_options" "$(cat "$TMP/$c.hopts")"
	# --help ends with its examples: 2 to 4 "  connscope" lines after
	# "examples:", and nothing but their explanations after them.
	n=$(awk '/^examples:$/ {e = 1; next} e && /^  connscope / {n++} e && !/^  / {bad = 1} END {print bad ? -1 : n + 0}' "$TMP/$c.help")
	[[ $n -ge 2 && $n -le 4 ]] && ok "$c/help_ends_with_examples" ||
		fail "$c/help_ends_with_examples" "$n examples (-1: text after them)"
	assert_eq "$(awk '/^EXAMPLES$/ {e = 1; next} /^[A-Z]/ {e = 0} e && /^ +connscope /' "$TMP/$c.txt" | wc -l)" "$n" \
		"$c/page_has_the_examples"
	assert_eq "$(grep -c "^       connscope-$c - " "$TMP/$c.txt")" 1 "$c/name_line"
done

# connscope(8): renders clean and names every command's page.
sed 's|@UNITDIR@|/lib/systemd/system|g' "$REPO_ROOT/docs/connscope.8" >"$TMP/connscope.8"
render "$TMP/connscope.8" "$TMP/main.err" >"$TMP/main.txt"
assert_eq "$(head -c 300 "$TMP/main.err")" "" main/renders_without_warnings
for c in "${CMDS[@]}"; do
	assert_eq "$(grep -c "connscope-$c(8)" "$TMP/main.txt")" 2 "main/names_connscope-$c"
done

# make install: every page, readable.
P=$TMP/prefix
make -C "$REPO_ROOT" --no-print-directory -s install PREFIX="$P" >"$TMP/make.log" 2>&1
assert_eq "$?" 0 make_install
for c in connscope "${CMDS[@]/#/connscope-}"; do
	assert_eq "$(stat -c %a "$P/share/man/man8/$c.8" 2>/dev/null)" 644 "installed/$c"
done

# The top-level help likewise, and version's own.
for h in --help -h help; do
	"$CONNSCOPE" "$h" >"$TMP/top.help" 2>"$TMP/top.err"
	assert_eq "$?:$(head -c 300 "$TMP/top.err")" 0: "top/help_exit_status '$h'"
	assert_eq "$(head -1 "$TMP/top.help")" "usage: connscope COMMAND [OPTIONS]" "top/help_on_stdout '$h'"
	assert_eq "$(awk 'length > 80' "$TMP/top.help" | head -1)" "" "top/help_fits_80_columns '$h'"
done
for h in "version --help" "help version"; do
	# shellcheck disable=SC2086 # two words
	"$CONNSCOPE" $h >"$TMP/v.help" 2>"$TMP/v.err"
	assert_eq "$?:$(head -c 300 "$TMP/v.err")" 0: "version/help_exit_status '$h'"
	grep -q '^usage: connscope version' "$TMP/v.help" && ok "version/help_on_stdout '$h'" ||
		fail "version/help_on_stdout '$h'" "$(head -c 200 "$TMP/v.help")"
done

# -V, --version and version say the same.
V=$("$CONNSCOPE" version)
assert_eq "$("$CONNSCOPE" -V)|$("$CONNSCOPE" --version)" "$V|$V" version_flags
[[ $V =~ ^connscope\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && ok version_format || fail version_format "$V"
