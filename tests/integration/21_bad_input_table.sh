#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Bad input, table-driven: each row is one invocation a user could type.
# Every one must end with its documented status (2 for a bad command line,
# 1 for an environment that cannot work: see docs/commands.md, "Exit status"), one
# message on stderr that names the problem and says what to give instead,
# every line of it within 80 columns (a long message wrapped, its
# continuation lines indented two spaces), an empty stdout, and nothing
# written: each runs in an empty directory that
# must stay as it was, report paths point into it, and a planted link's
# target keeps its bytes.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
WORK=$TMP/work
mkdir -p "$WORK"

# The state of WORK (and the victim of the link rows) before each row.
listing() {
	(cd "$WORK" && find . -printf '%p %y %s\n' | sort)
	cat "$TMP/victim" 2>/dev/null
}

# row NAME STATUS PROBLEM FIX CMD...: PROBLEM and FIX are extended regexes
# the one stderr message (its wrapped lines joined) must both match (the
# problem named, the way out); NAME/fits_80_columns checks its width, the
# test's directory counted as a short one (msg_width).
row() {
	local name=$1 want=$2 problem=$3 fix=$4 rc before after
	shift 4
	before=$(listing)
	(cd "$WORK" && timeout 60 "$@") >"$TMP/out" 2>"$TMP/err"
	rc=$?
	after=$(listing)
	fits80 "$name" "$TMP/err" "$TMP"
	msg_join "$TMP/err" >"$TMP/msg"
	if [[ $rc -ne $want ]]; then
		fail "$name" "exit status $rc, want $want; stderr: $(cat "$TMP/err")"
		return
	fi
	if [[ $(wc -l <"$TMP/msg") -ne 1 ]]; then
		fail "$name" "want one message on stderr, got: $(cat "$TMP/err")"
		return
	fi
	if ! grep -Eq -- "$problem" "$TMP/msg"; then
		fail "$name" "message does not name the problem (/$problem/): $(cat "$TMP/msg")"
		return
	fi
	if ! grep -Eq -- "$fix" "$TMP/msg"; then
		fail "$name" "message says no fix (/$fix/): $(cat "$TMP/msg")"
		return
	fi
	if [[ -s $TMP/out ]]; then
		fail "$name" "wrote to stdout: $(head -c 200 "$TMP/out")"
		return
	fi
	if [[ $before != "$after" ]]; then
		fail "$name" "left files behind: before [$before] after [$after]"
		return
	fi
	ok "$name"
}

C=$CONNSCOPE
ME=$$
NOPID=$(cat /proc/sys/kernel/pid_max)
while [ -e "/proc/$NOPID" ]; do NOPID=$((NOPID - 1)); done
RANGE='expected (seconds|an integer) between'

# ---- commands and options ----
row unknown_command 2 "unknown command 'frobnicate'" "COMMAND --help|--help" $C frobnicate
row unknown_option 2 "option .--frob. is unknown|unrecognized option" "--help" $C attach --frob
row stray_argument 2 "unexpected argument 'extra'" "--help|remove|drop" $C summary extra
# attach's --prom takes a FILE, summary's writes to stdout: the way to a file.
row summary_prom_file 2 "unexpected argument 'm\.prom'" "connscope summary --prom > m\.prom" \
	$C summary --prom m.prom

# ---- pids ----
row missing_pid 2 "which process" "give -p PID" $C attach -d 1
row zero_pid 2 "-p '0'" "expected a process id" $C attach -p 0 -d 1
row negative_pid 2 "-p '-5'" "expected a process id" $C attach -p -5 -d 1
row non_numeric_pid 2 "-p 'abc'" "expected a process id" $C attach -p abc -d 1
row huge_pid 2 "-p '99999999999'" "1\.\.[0-9]+" $C attach -p 99999999999 -d 1
row empty_pid_in_list 2 "-p '1,,2'" "e\.g\. -p" $C attach -p 1,,2 -d 1
row no_such_pid 1 "no such process: $NOPID" "pgrep" $C attach -p "$NOPID" -d 1
# A name where a pid belongs: the way to trace by name.
row name_as_pid 2 "-p 'nginx': expected a process id, not a name" "--comm nginx" \
	$C attach -p nginx -d 1
row name_as_pid_summary 2 "-p 'nginx'" "pgrep -d, nginx" $C summary -p nginx
# A process the kernel will not let us read although we may (root with
# CAP_SYS_PTRACE): the refusal named, not "needs root". Pid 1 is such a
# process where a security module protects it, as on the machine CI runs.
if ! readlink /proc/1/ns/net >/dev/null 2>&1 && grep -q '^CapEff:.*[0-9a-f]' /proc/self/status; then
	row pid_refused_despite_ptrace 1 \
		"cannot read the namespaces and fds of pid 1 \(.*\): Permission denied although connscope has CAP_SYS_PTRACE" \
		"security module|trace another process" $C attach -p 1 -d 1
	row pid_refused_fdleak 1 "cannot read the fds of pid 1 \(.*\).*CAP_SYS_PTRACE" \
		"trace another process" $C fdleak -p 1 -d 1
else
	skip pid_refused_despite_ptrace "pid 1's namespaces are readable here"
fi
# bcc's [interval [count]] after the options.
row positional_not_a_number 2 "unexpected argument 'abc'" "\[interval \[count\]\]" \
	$C attach -p $ME abc
row positional_interval_twice 2 "'2' after the options is the interval, and -i" "give one of them" \
	$C attach -p $ME -i 1 2
row positional_count_and_duration 2 "a count \('5'\) and -d both end the run" "give one of them" \
	$C fdleak -p $ME 1 5 -d 2
row positional_count_zero 2 "count '0'" "between 1 and" $C fdleak -p $ME 1 0
row positional_too_many 2 "unexpected argument '3'" "--help" $C attach -p $ME 1 2 3
row kernel_thread 2 "process 2 \(kthreadd\) is a kernel thread" "user process" $C attach -p 2 -d 1
row kernel_thread_exporter 2 "is a kernel thread" "user process" \
	$C exporter -p 2 -d 1 --listen 127.0.0.1:1

# ---- targets: a cgroup that existed and was removed before the start ----
CGMNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
GONE=$CGMNT/connscope-bad-$ME
mkdir "$GONE" && rmdir "$GONE"
row cgroup_removed 2 "--cgroup '$GONE': not a cgroup v2 directory" "give a directory under the cgroup2 mount" \
	$C attach --cgroup "$GONE" -d 1
row cgroup_removed_exporter 2 "--cgroup '$GONE': not a cgroup v2 directory" \
	"give a directory under the cgroup2 mount" $C exporter --cgroup "$GONE" -d 1

# ---- durations and intervals ----
row duration_non_numeric 2 "-d 'abc'" "$RANGE" $C attach -p $ME -d abc
row duration_negative 2 "-d '-5'" "$RANGE" $C attach -p $ME -d -5
row duration_huge 2 "-d '1e12'" "$RANGE" $C attach -p $ME -d 1e12
# The bounds as a reader types them: 30 days is 2592000, not 2.592e+06.
row duration_bounds_plain 2 "-d '1e12'" "between 0\.1 and 2592000$" $C attach -p $ME -d 1e12
row duration_nan 2 "-d 'nan'" "$RANGE" $C attach -p $ME -d nan
row interval_zero 2 "-i '0'" "$RANGE 0\.1" $C attach -p $ME -i 0
row interval_negative 2 "-i '-1'" "$RANGE" $C attach -p $ME -i -1
row interval_huge 2 "-i '99999999'" "$RANGE" $C attach -p $ME -i 99999999
row interval_non_numeric 2 "-i '1s'" "$RANGE" $C exporter -p $ME -i 1s
row leak_age_negative 2 "--leak-age '-1'" "$RANGE" $C attach -p $ME --leak-age -1
row top_zero 2 "--top '0'" "$RANGE" $C attach -p $ME --top 0
row ringbuf_not_pow2 2 "--ringbuf-size 5000" "power of two" $C attach -p $ME --ringbuf-size 5000

# ---- --listen ----
row listen_no_port 2 "--listen '127.0.0.1'" "ADDR:PORT" $C exporter -p $ME --listen 127.0.0.1
row listen_port_zero 2 "--listen ':0'" "port 1\.\.65535" $C exporter -p $ME --listen :0
row listen_port_huge 2 "--listen ':70000'" "port 1\.\.65535" $C exporter -p $ME --listen :70000
row listen_port_non_numeric 2 "--listen ':http'" "port 1\.\.65535" $C exporter -p $ME --listen :http
row listen_bad_address 2 "'999\.1\.1\.1' is not an IP address" "127\.0\.0\.1" \
	$C exporter -p $ME --listen 999.1.1.1:9477
row listen_hostname 2 "'localhost' is not an IP address" "names are not resolved" \
	$C exporter -p $ME --listen localhost:9477
port=$(free_port)
fx_start holder server -p "$port" || fail listen_port_in_use "no listener to collide with"
row listen_port_in_use 1 "cannot listen on 127\.0\.0\.1:$port" "another --listen port" \
	$C exporter -p $ME -d 1 --listen 127.0.0.1:$port
fx_stop holder

# ---- flags that cannot go together ----
row exporter_pid_and_all 2 "-p and --all both given" "not both" $C exporter -p $ME --all
row exporter_neither 2 "which processes\?" "--all" $C exporter
row top_processes_without_all 2 "--top-processes needs --all" "--all" \
	$C exporter -p $ME --top-processes 3
row children_with_all 2 "--children with --all" "drop --children" $C exporter --all --children

# ---- each command's usage errors (a sweep of every command's options) ----
row missing_pid_doctor 2 "which process" "give -p PID" $C doctor
row missing_pid_fdleak 2 "which process" "give -p PID" $C fdleak
row non_numeric_pid_summary 2 "-p 'abc'" "pgrep -d, abc" $C summary -p abc
row non_numeric_pid_run 2 "-p 'abc'" "pgrep -d, abc" $C run -p abc -- touch ran
row huge_pid_run 2 "-p '999999999'" "1\.\.[0-9]+" $C run -p 999999999 -- touch ran
row pid_without_value 2 "'-p' is unknown or lacks its value" "--help" $C attach -p
row pid_without_value_summary 2 "'-p' is unknown or lacks its value" "--help" $C summary -p
row report_without_value 2 "option '--report' needs a value" "--help" \
	$C attach -p $ME --report
row listen_without_value 2 "option '--listen' needs a value" "--help" \
	$C exporter -p $ME --listen
row duration_without_value_demo 2 "'-d' is unknown or lacks its value" "--help" $C demo -d
row unknown_option_doctor 2 "'--bogus' is unknown" "--help" $C doctor --bogus
row unknown_option_exporter 2 "'--bogus' is unknown" "--help" $C exporter --bogus
row unknown_option_summary 2 "'--bogus' is unknown" "--help" $C summary --bogus
row unknown_option_diff 2 "'--bogus' is unknown" "--help" $C diff --bogus a b
row unknown_option_demo 2 "'--bogus' is unknown" "--help" $C demo --bogus
# -x inside a cluster: the option named is -x, not the word before it.
row unknown_option_in_cluster 2 "'-x' is unknown or lacks its value" "--help" \
	$C attach -p $ME --children -xj
row unknown_option_run 2 "'--bogus' is unknown" "--help" $C run --bogus -- touch ran
# An option of another command: exporter's --listen given to fdleak.
row option_of_exporter 2 "'--listen' is unknown" "--help" $C fdleak -p $ME --listen :9477
row option_of_attach 2 "'--max-time-wait' is unknown" "--help" \
	$C exporter -p $ME --max-time-wait 10
row unknown_command_option 2 "unknown command '--bogus'" "--help" $C --bogus
# version takes nothing (it printed the version and exited 0 whatever came
# after it); `help CMD` names one command.
row version_extra_argument 2 "version: unexpected argument '--bogus'" "--help" $C version --bogus
row version_flag_extra_argument 2 "-V: unexpected argument 'x'" "--help" $C -V x
row help_unknown_command 2 "unknown command 'frob'" "--help" $C help frob
row help_two_commands 2 "unexpected argument 'doctor'" "help COMMAND" $C help attach doctor
row comm_too_long 2 "--comm 'averyveryverylongname'" "--comm averyveryverylo" \
	$C attach --comm averyveryverylongname
row container_unknown 2 "--container no-such-container-$ME: no running container" "podman ps|docker ps" \
	$C attach --container no-such-container-$ME
row cgroup_missing_run 2 "--cgroup '/nonexistent/cg': not a cgroup v2 directory" \
	"give a directory under the cgroup2 mount" $C run --cgroup /nonexistent/cg -- touch ran
row positional_not_a_number_fdleak 2 "unexpected argument 'extra'" "\[interval \[count\]\]" \
	$C fdleak -p $ME extra
row positional_interval_twice_fdleak 2 "'2' after the options is the interval" "give one of them" \
	$C fdleak -p $ME -i 1 2
row fd_sites_with_all 2 "--fd-sites" "--all" $C exporter --all --fd-sites
row fd_sites_no_fd_exporter 2 "--fd-sites" "--no-fd" $C exporter -p $ME --fd-sites --no-fd
row listen_port_huge_no_pid 2 "--listen ':99999'" "port 1\.\.65535" $C exporter --listen :99999
row listen_unclosed_bracket 2 "'\[::1' is not an IP address" "\[::1\]:" \
	$C exporter -p $ME --listen '[::1:9477'
row run_no_command 2 "no COMMAND" "give the load generator after --" $C run
row run_only_dashes 2 "no COMMAND" "give the load generator after --" $C run --
row run_command_not_found 2 "cannot run '/nonexistent/cmd': No such file" "give its path" \
	$C run -- /nonexistent/cmd
printf 'not a program\n' >"$TMP/notexec"
row run_command_not_executable 2 "cannot run '$TMP/notexec': Permission denied" "give its path" \
	$C run -- "$TMP/notexec"
row run_nothing_traced 2 "nothing to trace" "give -p PID" $C run --no-trace-command -- touch ran
row diff_no_files 2 "give two reports" "got 0 files" $C diff
row diff_three_files 2 "give two reports" "got 3 files" $C diff a b c
row diff_missing_file 2 "cannot read nope\.json \(BEFORE\): No such file" "connscope doctor -j" \
	$C diff nope.json nope.json
row diff_directory 2 "\(BEFORE\) is not a connscope report" "connscope doctor -j" \
	$C diff "$TMP" "$TMP"
row diff_not_a_report 2 "notexec \(BEFORE\) is not a connscope report" "connscope doctor -j" \
	$C diff "$TMP/notexec" "$TMP/notexec"

# ---- --report / --prom paths ----
mkdir "$WORK/adir"
row report_is_directory 2 "report $WORK/adir is a directory" "give a file name" \
	$C attach -p $ME -d 1 --report "$WORK/adir"
row report_trailing_slash 2 "names a directory" "give a file name" \
	$C attach -p $ME -d 1 --report "$WORK/adir/"
row report_empty_name 2 "report's file name is empty" "give one \(e\.g\. report\.html\)" \
	$C attach -p $ME -d 1 --report ""
row report_missing_directory 1 "cannot write the report $WORK/nodir/r\.html: No such file" \
	"check the directory exists" $C attach -p $ME -d 1 --report "$WORK/nodir/r.html"
# /proc takes no new files, even from root: unwritable whoever asks.
row report_unwritable_directory 1 "cannot write the report /proc/r\.html" \
	"check the directory exists and is writable" $C attach -p $ME -d 1 --report /proc/r.html
printf 'precious\n' >"$TMP/victim"
ln -s "$TMP/victim" "$WORK/link.html"
row report_is_symlink 2 "report $WORK/link\.html is a symbolic link" "give the real path" \
	$C attach -p $ME -d 1 --report "$WORK/link.html"
row prom_is_symlink 2 "report $WORK/link\.html is a symbolic link" "give the real path" \
	$C attach -p $ME -d 1 --prom "$WORK/link.html"
row run_stream_is_symlink 2 "--json-stream $WORK/link\.html is a symbolic link" "give the real path" \
	$C run --json-stream "$WORK/link.html" -- touch ran
rm "$WORK/link.html"

# ---- every output file alike, whichever command writes it ----
# A path that names no file is a bad command line (2); a directory that is
# missing or cannot be written, an error (1). Both found before any work:
# `run` checks its outputs before it starts COMMAND (touch ran: a file in
# WORK if it did), and makes --json-stream's file once tracing works.
NODIR=$WORK/nodir
NOWRITE='check the directory exists and is writable'
row prom_missing_directory 1 "cannot write the report $NODIR/m\.prom: No such file" "$NOWRITE" \
	$C attach -p $ME -d 1 --prom "$NODIR/m.prom"
row prom_is_directory 2 "report $WORK/adir is a directory" "give a file name \(e\.g\. .*/metrics\.prom\)" \
	$C attach -p $ME -d 1 --prom "$WORK/adir"
row doctor_report_missing_directory 1 "cannot write the report $NODIR/r\.html: No such file" "$NOWRITE" \
	$C doctor -p $ME -d 1 --report "$NODIR/r.html"
row run_report_missing_directory 1 "cannot write the report $NODIR/r\.html: No such file" "$NOWRITE" \
	$C run --report "$NODIR/r.html" -- touch ran
row run_prom_missing_directory 1 "cannot write the report $NODIR/m\.prom: No such file" "$NOWRITE" \
	$C run --prom "$NODIR/m.prom" -- touch ran
row run_report_is_directory 2 "report $WORK/adir is a directory" "give a file name" \
	$C run --report "$WORK/adir" -- touch ran
row run_stream_missing_directory 1 "cannot write --json-stream $NODIR/s\.ndjson: No such file" "$NOWRITE" \
	$C run --json-stream "$NODIR/s.ndjson" -- touch ran
row run_stream_unwritable_directory 1 "cannot write --json-stream /proc/s\.ndjson" "$NOWRITE" \
	$C run --json-stream /proc/s.ndjson -- touch ran
row run_stream_is_directory 2 "--json-stream $WORK/adir is a directory" \
	"give a file name \(e\.g\. .*/stream\.ndjson\)" $C run --json-stream "$WORK/adir" -- touch ran
row run_stream_empty_name 2 "--json-stream's file name is empty" "give one" \
	$C run --json-stream "" -- touch ran
# A good stream path beside a bad one, or a bad target: no stream file.
row run_stream_beside_bad_report 1 "cannot write the report $NODIR/r\.html" "$NOWRITE" \
	$C run --json-stream s.ndjson --report "$NODIR/r.html" -- touch ran
row run_stream_no_such_pid 1 "no such process: $NOPID" "pgrep" \
	$C run -p "$NOPID" --json-stream s.ndjson -- touch ran
# -j takes no file, and the HTML report is --report's: the way to each.
row json_file_attach 2 "-j takes no file \('out\.json'\)" "; use -j > out\.json$" \
	$C attach -p $ME -d 1 -j out.json
row json_file_summary 2 "-j takes no file \('out\.json'\)" "-j > out\.json" $C summary -j out.json
row json_file_run 2 "-j takes no file \('out\.json'\)" "; use -j -- COMMAND > out\.json$" \
	$C run -j out.json -- touch ran
row json_equals_file 2 "--json takes no file \('out\.json'\)" "-j > out\.json" \
	$C attach -p $ME -d 1 --json=out.json
row json_file_demo 2 "-j takes no file \('out\.json'\)" "-j > out\.json" $C demo -j out.json
row html_option 2 "'--html' is unknown" "the HTML report is --report FILE\.html" \
	$C attach -p $ME -d 1 --html r.html
row html_option_run 2 "'--html' is unknown" "--report FILE\.html" $C run --html r.html -- touch ran

# ---- privileges and the kernel ----
row not_root 1 "needs root" "run it with sudo" \
	setpriv --reuid=65534 --regid=65534 --clear-groups $C attach -p $ME -d 1
row root_without_capabilities 1 "cannot load the BPF programs: Operation not permitted" \
	"run as root" setpriv --inh-caps=-all --bounding-set=-all $C attach -p $ME -d 1
row btf_missing 1 "cannot read BTF file /nonexistent/vmlinux: No such file" "--btf|BTFHub" \
	$C attach -p $ME -d 1 --btf /nonexistent/vmlinux
printf 'not btf\n' >"$TMP/notbtf"
row btf_not_btf 1 "$TMP/notbtf is not a BTF file" "BTFHub|/sys/kernel/btf/vmlinux" \
	$C attach -p $ME -d 1 --btf "$TMP/notbtf"

# ---- the old report temporary: a link planted at FILE.tmp ----
# Reports used to be written to FILE.tmp with fopen(): a link planted
# there by anyone who can write the directory sent root's write wherever
# it pointed. The run must succeed, write FILE, and leave the link's
# target alone.
printf 'precious\n' >"$TMP/victim"
ln -s "$TMP/victim" "$WORK/r.html.tmp"
fx_start tgt server -p "$(free_port)" || fail planted_tmp_link "no target process"
if (cd "$WORK" && "$C" attach -p "$FX_PID_tgt" -d 0.5 -j --report r.html) \
	>"$TMP/out" 2>"$TMP/err"; then
	if [[ $(cat "$TMP/victim") == precious && -f $WORK/r.html && ! -L $WORK/r.html ]] &&
		grep -q '<html' "$WORK/r.html"; then
		ok planted_tmp_link
	else
		fail planted_tmp_link "victim now: $(head -c 80 "$TMP/victim"); $(ls -l "$WORK")"
	fi
else
	fail planted_tmp_link "attach failed: $(cat "$TMP/err")"
fi
fx_stop tgt
rm -f "$WORK/r.html.tmp" "$WORK/r.html"
leftover=$(find "$WORK" -name '.r.html.*')
assert_eq "$leftover" "" planted_tmp_link/no_temporary_left

# ---- run --json-stream into a pipe ----
# /dev/stdout and bash's >(...) (/dev/fd/63) are symbolic links no one
# planted, and a link to a FIFO leads to no file a write could spoil: the
# stream goes into each, one JSON object a line, and the run's status is
# COMMAND's. (A link to a regular file stays refused: run_stream_is_symlink.)
STREAM_CMD=(sh -c 'echo said; sleep 0.5; exit 3')
# stream_ok NAME RC FILE: RC is COMMAND's 3; FILE holds the interval lines
# ({"t_s":...}, each valid JSON), at least one, and not COMMAND's "said"
# (which goes to stderr when the stream is on stdout). On stdout the text
# report follows them, as with --json-stream -.
stream_ok() {
	local name=$1 rc=$2 file=$3 lines
	if [[ $rc -ne 3 ]]; then
		fail "$name" "exit status $rc, want COMMAND's 3; stderr: $(tail -3 "$TMP/err")"
		return
	fi
	lines=$(grep -c '^{"t_s":' "$file")
	if [[ $lines -lt 1 ]] || grep -qx said "$file" ||
		[[ $(grep '^{"t_s":' "$file" | jq -c . 2>/dev/null | wc -l) -ne $lines ]]; then
		fail "$name" "want JSON lines and no 'said', got: $(head -c 300 "$file")"
		return
	fi
	ok "$name ($lines lines)"
}
timeout 60 "$C" run -i 0.2 --json-stream >(cat >"$TMP/ps.ndjson") -- "${STREAM_CMD[@]}" \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
wait $!
stream_ok run_stream_process_substitution $rc "$TMP/ps.ndjson"
timeout 60 "$C" run -i 0.2 --json-stream /dev/stdout -- "${STREAM_CMD[@]}" 2>"$TMP/err" |
	cat >"$TMP/pipe.ndjson"
stream_ok run_stream_dev_stdout_pipe "${PIPESTATUS[0]}" "$TMP/pipe.ndjson"
timeout 60 "$C" run -i 0.2 --json-stream /dev/stdout -- "${STREAM_CMD[@]}" \
	>"$TMP/redir.ndjson" 2>"$TMP/err"
stream_ok run_stream_dev_stdout_file $? "$TMP/redir.ndjson"
mkfifo "$TMP/fifo"
ln -s "$TMP/fifo" "$WORK/fifo.link"
cat "$TMP/fifo" >"$TMP/fifo.ndjson" &
reader=$!
timeout 60 "$C" run -i 0.2 --json-stream "$WORK/fifo.link" -- "${STREAM_CMD[@]}" \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[[ $rc -eq 3 ]] || kill "$reader" 2>/dev/null	# never opened: no EOF comes
wait "$reader"
stream_ok run_stream_link_to_fifo $rc "$TMP/fifo.ndjson"
rm "$WORK/fifo.link"

# A stream file that is there but cannot be written (here a read-only
# bind, in a mount namespace of its own) is found before COMMAND starts
# (with --warmup, COMMAND runs before tracing begins: `touch ran` would
# leave a file), and keeps its bytes.
printf 'kept\n' >"$WORK/ro.ndjson"
row run_stream_read_only 1 "cannot write --json-stream $WORK/ro\.ndjson: Read-only file system" \
	"" unshare -m --propagation private sh -c 'mount --bind "$1" "$1" &&
		mount -o remount,ro,bind "$1" && exec "$2" run --warmup 0.1 --json-stream "$1" \
		-- touch ran' \
	sh "$WORK/ro.ndjson" "$C"
rm "$WORK/ro.ndjson"
