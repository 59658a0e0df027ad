# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# For tests/lvm/*: real lvm2 and udev in the guest, around tools/fastlinearctl.
# A test sources it (after common.sh, which tests/run gives it) and calls
# _lvm_setup first.  _group_cleanup (called by common.sh's _cleanup) removes
# the volume group, the PVs' labels and the udev rules again.
#
# What the guest gives: virtme-ng's init starts systemd-udevd (not
# systemd).  Whatever the host runs, the rule and fastlinear-queue the
# test installs see systemd as running only where a test says so
# (_lvm_systemd: their "/run/systemd/system" is $FL_TMP/systemd, their
# systemd-run the stand-in $FL_TMP/systemd-run); else the queue detaches
# its jobs itself, as without systemd;
# /etc/lvm is an empty tmpfs.  LVM here reads $FL_TMP/lvm/lvm.conf
# (LVM_SYSTEM_DIR): only the test's PVs are scanned, no devices file, no
# backups, no dmeventd.  udev gets, in /run/udev/rules.d (which overrides
# /lib/udev/rules.d): the project's 95-fastlinear.rules with its RUN
# pointing at a wrapper of tools/fastlinear-queue with the test's
# environment, and an empty 69-lvm.rules (no event autoactivation behind
# the test's back: with udev and no systemd, lvm2's rule runs vgchange
# -aay from udev itself).

FL_CTL=$FL_SRC/tools/fastlinearctl
FL_VG=fl
export LVM_SUPPRESS_FD_WARNINGS=1

_lvm_setup() {
	local d=$FL_TMP/lvm

	_have_program lvm
	[ -x "$FL_CTL" ] || _fail "$FL_CTL not built (make tools)"
	pgrep -x systemd-udevd >/dev/null || _skip "systemd-udevd is not running"
	mkdir -p "$d" /run/udev/rules.d "$FL_TMP/flstate"
	cat >"$d/lvm.conf" <<-EOF
	devices {
		use_devicesfile = 0
		types = [ "nullb", 16 ]
		obtain_device_list_from_udev = 0
		global_filter = [ "a|^/dev/flnb|", "a|^/dev/ram|", "a|^/dev/mapper/fl-slowpv\$|", "r|.*|" ]
	}
	global {
		locking_dir = "/run/lock/lvm"
		event_activation = 0
		use_lvmpolld = 0
	}
	activation {
		monitoring = 0
		udev_sync = 1
		udev_rules = 1
	}
	backup {
		backup = 0
		archive = 0
	}
	EOF
	export LVM_SYSTEM_DIR=$d
	export FASTLINEAR_CONF=$FL_TMP/fastlinear.conf
	export FASTLINEAR_STATE_DIR=$FL_TMP/flstate
	: >"$FASTLINEAR_CONF"
	# the helper as make install substitutes it, with the test's values
	# (FL_LVM_GATE_SECS: how long the hold lasts at most, default 30)
	sed -e "s|@CTL@|$FL_CTL|" -e "s|@STATEDIR@|$FASTLINEAR_STATE_DIR|" \
		-e "s|@CTLARGS@|--config $FASTLINEAR_CONF --state-dir $FASTLINEAR_STATE_DIR|" \
		-e "s|@ENV@|LVM_SYSTEM_DIR=$d LVM_SUPPRESS_FD_WARNINGS=1|" -e "s|@WAIT@|60|" \
		-e "s|@GATESECS@|${FL_LVM_GATE_SECS:-30}|" -e "s|@SYSTEMDDIR@|$FL_TMP/systemd|" \
		-e "s|@SYSTEMDRUN@|$FL_TMP/systemd-run|" \
		"$FL_SRC/tools/fastlinear-queue" >"$FL_TMP/fl-queue"
	chmod +x "$FL_TMP/fl-queue"
	_lvm_sdrun_write
	sed -e "s|@QUEUE@|$FL_TMP/fl-queue|" -e "s|@CTL@|$FL_CTL|" \
		-e "s|@CTLARGS@|--config $FASTLINEAR_CONF --state-dir $FASTLINEAR_STATE_DIR|" \
		-e "s|@SYSTEMDDIR@|$FL_TMP/systemd|" \
		"$FL_SRC/tools/95-fastlinear.rules" >/run/udev/rules.d/95-fastlinear.rules
	: >/run/udev/rules.d/69-lvm.rules
	echo 1 >"$FL_TMP/lvm-rules"
	udevadm control --reload || _fail "udevadm control --reload failed"
}

# _lvm_sdrun_write: $FL_TMP/systemd-run, the queue's systemd-run: it
# queues CMD as systemd would (--on-active=N: N seconds later), detached,
# its output and a line "... UNIT exited RC" in queue.log, and logs each
# call to systemd-run.log ("EPOCHREALTIME UNIT [after Ns]: queued|failed|
# dropped").  $FL_TMP/systemd-run.ctl (_lvm_sdrun) says, per kind of
# unit (convert, release: fastlinear-KIND-dm-N-SEQ), what becomes of it:
#   fail KIND        systemd-run fails (exit 1)
#   drop KIND        accepted, never run (a job that dies before it acts)
#   hold KIND FILE   runs once FILE exists (then after its delay)
_lvm_sdrun_write() {
	cat >"$FL_TMP/systemd-run" <<-EOF
	#!/bin/bash
	log=$FL_TMP/systemd-run.log ctl=$FL_TMP/systemd-run.ctl q=$FASTLINEAR_STATE_DIR/queue.log
	EOF
	cat >>"$FL_TMP/systemd-run" <<-'EOF'
	unit= delay= mode= hold=
	while [ $# -gt 0 ]; do
		case $1 in
		--unit | --description | -p | --property) [ "$1" = --unit ] && unit=$2; shift 2 ;;
		--on-active=*) delay=${1#*=}; shift ;;
		-*) shift ;;
		*) break ;;
		esac
	done
	kind=${unit#fastlinear-}
	kind=${kind%%-*}
	[ -e "$ctl" ] && while read -r m k f; do
		[ "$k" = "$kind" ] && mode=$m hold=$f
	done <"$ctl"
	case $mode in
	fail) echo "$EPOCHREALTIME $unit: failed" >>"$log"; exit 1 ;;
	drop) echo "$EPOCHREALTIME $unit: dropped" >>"$log"; exit 0 ;;
	esac
	echo "$EPOCHREALTIME $unit${delay:+ after ${delay}s}: queued" >>"$log"
	# shellcheck disable=SC2016
	setsid -f bash -c 'h=$1 d=$2 u=$3 l=$4; shift 4
		if [ -n "$h" ]; then while [ ! -e "$h" ]; do sleep 0.1; done; fi
		[ -z "$d" ] || sleep "$d"
		echo "$EPOCHREALTIME $u: starts" >>"$l"
		"$@"
		echo "$EPOCHREALTIME $u: exited $?" >>"$l"' sdrun "$hold" "$delay" "$unit" "$log" "$@" \
		</dev/null >>"$q" 2>&1
	EOF
	chmod +x "$FL_TMP/systemd-run"
}

# _lvm_systemd: from now on the rule and the queue see systemd as running
_lvm_systemd() {
	mkdir -p "$FL_TMP/systemd"
}

# _lvm_sdrun LINE...: the stand-in systemd-run's orders (see above)
_lvm_sdrun() {
	printf '%s\n' "$@" >"$FL_TMP/systemd-run.ctl"
}

# _lvm_conf LINE...: the fastlinear.conf the udev jobs read
_lvm_conf() {
	printf '%s\n' "$@" >"$FASTLINEAR_CONF"
}

# _lvm_pv KIND [SIZE_MB]: a lower device (nullb.sh) made a PV; prints it
_lvm_pv() {
	local dev

	dev=$(_lower_create "$1" "${2:-128}") || exit 1
	pvcreate -q -y "$dev" >&2 || _fail "pvcreate $dev failed"
	echo "$dev" >>"$FL_TMP/pvs"
	echo "$dev"
}

# _lvm_vg PV...: volume group $FL_VG on them
_lvm_vg() {
	vgcreate -q "$FL_VG" "$@" || _fail "vgcreate $FL_VG $* failed"
	echo 1 >"$FL_TMP/vg"
}

# _lvm_lv NAME SIZE PV...: a logical volume (PVs: where its extents go)
_lvm_lv() {
	local n=$1 size=$2

	shift 2
	lvcreate -q -y -W n -Z n -n "$n" -L "$size" "$FL_VG" "$@" ||
		_fail "lvcreate $n $size $* failed"
}

# _lvm_dm LV: dm name of LV in $FL_VG (names without '-')
_lvm_dm() {
	echo "$FL_VG-$1"
}

# _lvm_types LV: the target types of the live table, in order, one line
_lvm_types() {
	_dm_types "$FL_VG-$1"
}

# _lvm_ctl ARGS...: fastlinearctl, its output to the log; its status
_lvm_ctl() {
	local rc=0

	_log "+ fastlinearctl $*"
	# a hang must not eat the guest's time
	timeout "$(_secs 120)" "$FL_CTL" --config "$FASTLINEAR_CONF" \
		--state-dir "$FASTLINEAR_STATE_DIR" "$@" >"$FL_TMP/ctl.out" 2>&1 || rc=$?
	_lvm_indent "  | " <"$FL_TMP/ctl.out"
	_log "  exit $rc"
	return "$rc"
}

# _lvm_indent PREFIX: stdin, each line after PREFIX (sed 's/^/PREFIX/'
# without its fork: under TCG each one counts, and every _lvm_ctl does it)
_lvm_indent() {
	local l

	while IFS= read -r l || [ -n "$l" ]; do
		printf '%s%s\n' "$1" "$l"
	done
}

# _lvm_has FILE STRING: FILE contains STRING, a fixed string (grep -qF
# with builtins)
_lvm_has() {
	local t=

	IFS= read -r -d '' t <"$1" || :
	[[ $t == *"$2"* ]]
}

# _lvm_ctl_ok ARGS... / _lvm_ctl_refused ARGS... (exit 1) with PATTERN in
# its output (last argument)
_lvm_ctl_ok() {
	_lvm_ctl "$@" || _fail "fastlinearctl $* failed"
}

_lvm_ctl_refused() {
	local pat=${!#} rc=0

	_lvm_ctl "${@:1:$#-1}" || rc=$?
	[ "$rc" = 1 ] || _fail "fastlinearctl ${*:1:$#-1}: exit $rc, expected 1 (refused)"
	_lvm_has "$FL_TMP/ctl.out" "$pat" ||
		_fail "fastlinearctl ${*:1:$#-1}: no '$pat' in its message"
	_log "ok: refused, with '$pat'"
}

# _lvm_wait_jobs: udev has handled every event, and every conversion it
# queued (fastlinear-queue's pending files) is done, within 60 s
_lvm_wait_jobs() {
	local secs i q=$FASTLINEAR_STATE_DIR/queue

	secs=$(_secs 60)

	udevadm settle -t "$secs" || _fail "udevadm settle timed out"
	for ((i = 0; i < secs * 10; i++)); do
		# a job's last event (its resume's) may still be in udev when
		# the job has ended (udev released its cookie first, in
		# 95-dm-notify.rules' RUN, then runs the queue): empty after a
		# settle too
		if _lvm_queue_empty "$q"; then
			udevadm settle -t "$secs" || _fail "udevadm settle timed out"
			_lvm_queue_empty "$q" && return 0
		fi
		sleep 0.1
	done
	cat "$FASTLINEAR_STATE_DIR/queue.log"
	_fail "queued conversions still pending after ${secs}s: $(ls "$q")"
}

# _lvm_queue_empty DIR: DIR has no entry, or is not there (ls -A
# without its fork)
_lvm_queue_empty() {
	local f

	for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$f" ] || [ -L "$f" ] && return 1
	done
	return 0
}

# _lvm_expect_types LV TYPES WHAT
_lvm_expect_types() {
	_expect_eq "$(_lvm_types "$1")" "$2" "$3"
}

# _lvm_expect_all LV TYPE WHAT: every line of the live table is TYPE, and
# there are as many lines as LVM has segments
_lvm_expect_all() {
	local types n t u=
	local -a tl=()
	local -A seen=()

	types=$(_lvm_types "$1")
	n=$(lvs --noheadings -o seg_count "$FL_VG/$1" 2>/dev/null)
	n=${n//[[:space:]]/}
	# the distinct types, sorted, one a line (sort -u), and their count,
	# with builtins
	read -ra tl <<<"$types"
	for t in "${tl[@]}"; do
		seen[$t]=1
	done
	if [ "${#seen[@]}" -gt 1 ]; then
		u=$(printf '%s\n' "${!seen[@]}" | LC_ALL=C sort)
	else
		u=${tl[0]:-}
	fi
	_expect_eq "$u" "$2" "$3 (table: $types)"
	_expect_eq "${#tl[@]}" "$n" "$3: table lines = LVM's segments"
}

# _lvm_devno LV: MAJ:MIN of the LV's dm device
_lvm_devno() {
	dmsetup info -c --noheadings -o major,minor --separator : "$(_lvm_dm "$1")"
}

_group_cleanup() {
	local pv i

	# a test that failed with its background fio still running
	_lvm_fio_kill
	awk -v t="$FL_TMP" 'index($2, t) == 1 { print $2 }' /proc/mounts | xargs -r umount
	# no queued job may run into the teardown
	if [ -n "${FASTLINEAR_STATE_DIR:-}" ]; then
		udevadm settle -t 30 2>/dev/null
		for ((i = 0; i < 300; i++)); do
			[ -z "$(ls -A "$FASTLINEAR_STATE_DIR/queue" 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	if [ -s "$FL_TMP/vg" ]; then
		vgchange -q -an "$FL_VG" >/dev/null 2>&1
		vgremove -q -ff "$FL_VG" >/dev/null 2>&1
		# whatever LVM could not remove (a suspended device, a pvmove)
		dmsetup ls 2>/dev/null | awk -v p="$FL_VG-" 'index($1, p) == 1 { print $1 }' |
			while read -r n; do
				dmsetup resume "$n" 2>/dev/null
				dmsetup remove -f --retry "$n" >/dev/null 2>&1
			done
		rm -f "$FL_TMP/vg"
	fi
	if [ -s "$FL_TMP/pvs" ]; then
		while read -r pv; do
			pvremove -q -ff -y "$pv" >/dev/null 2>&1
			wipefs -q -a "$pv" >/dev/null 2>&1
		done <"$FL_TMP/pvs"
		rm -f "$FL_TMP/pvs"
	fi
	# a test that unloaded the module and failed before loading it again
	if ! lsmod | grep -q '^dm_fastlinear '; then
		# shellcheck disable=SC2086
		insmod "$FL_MODULE" $FL_MODPARAMS
	fi
	if [ -s "$FL_TMP/lvm-rules" ]; then
		rm -f /run/udev/rules.d/95-fastlinear.rules /run/udev/rules.d/69-lvm.rules
		udevadm control --reload 2>/dev/null
		udevadm settle -t 30 2>/dev/null
		rm -f "$FL_TMP/lvm-rules"
	fi
}

# ---- tests/lvm/read-only, layers, names, locks, race --------------------

# _lvm_defer CMD: run CMD (a string) when the test exits, before the
# suite's teardown (_cleanup): kill what holds a lock before vgremove
# waits for it, remove what the teardown does not know
_lvm_defer() {
	local cmd=$1 cur

	cur=$(trap -p EXIT)
	# "trap -- 'OLD' EXIT", quoted by bash: OLD in $3
	eval "set -- $cur"
	trap -- "$cmd; ${3:-:}" EXIT
}

# _lvm_lvmconf SECTION LINE: LINE into SECTION (devices, global, ...) of
# the test's lvm.conf
_lvm_lvmconf() {
	sed -i "s|^$1 {\$|&\n\t$2|" "$LVM_SYSTEM_DIR/lvm.conf" ||
		_fail "cannot edit $LVM_SYSTEM_DIR/lvm.conf"
	grep -qF -- "$2" "$LVM_SYSTEM_DIR/lvm.conf" || _fail "no section $1 in lvm.conf"
}

# _lvm_lock_dir: LVM's locking_dir as lvmconfig gives it (the config
# files of LVM_SYSTEM_DIR: lvm.conf, lvmlocal.conf)
_lvm_lock_dir() {
	lvmconfig --typeconfig full global/locking_dir 2>/dev/null |
		sed -n 's/^locking_dir="\(.*\)"$/\1/p'
}

# _lvm_vg_named VG PV...: another volume group (_lvm_vg makes $FL_VG),
# removed when the test ends
_lvm_vg_named() {
	local vg=$1

	shift
	vgcreate -q "$vg" "$@" || _fail "vgcreate $vg $* failed"
	_lvm_defer "vgchange -q -an '$vg' >/dev/null 2>&1; vgremove -q -ff '$vg' >/dev/null 2>&1"
}

# _lvm_hold PATH [USER]: a process that holds an exclusive flock on PATH
# (opened for append, created if need be), as USER (default: root), until
# _lvm_release or the end of the test; its pid in lvm_held
_lvm_hold() {
	local path=$1 user=${2:-} i ino l
	local -a as=() locks f

	[ -n "$user" ] && as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups --)
	# shellcheck disable=SC2016
	"${as[@]}" bash -c 'exec 9>>"$1" && flock -x 9 && exec sleep 3600' fl-hold "$path" \
		</dev/null >/dev/null 2>"$FL_TMP/hold.err" &
	lvm_held=$!
	_lvm_defer "kill $lvm_held 2>/dev/null"
	# held once /proc/locks lists a write flock of the file (under the pid
	# of flock(1), which took it for the holder); read by bash, polled with
	# _lvm_nap: fewer forks under TCG
	for ((i = 0; i < 300; i++)); do
		if ino=$(stat -c %i "$path" 2>/dev/null); then
			mapfile -t locks </proc/locks
			for l in "${locks[@]}"; do
				read -ra f <<<"$l"
				[ "${f[1]}" = FLOCK ] && [ "${f[3]}" = WRITE ] && [[ ${f[5]} == *":$ino" ]] &&
					{ _log "$path: flock held by pid $lvm_held${user:+ ($user)}"; return 0; }
			done
		fi
		_lvm_alive "$lvm_held" || break
		_lvm_nap 0.1
	done
	cat "$FL_TMP/hold.err"
	_fail "could not hold a flock on $path${user:+ as $user}"
}

# _lvm_release PID: end that holder (and its lock)
_lvm_release() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	_log "released the flock of pid $1"
}

# _lvm_ctl_exit RC ARGS...: _lvm_ctl, which must exit RC
_lvm_ctl_exit() {
	local want=$1 rc=0

	shift
	_lvm_ctl "$@" || rc=$?
	[ "$rc" = "$want" ] || _fail "fastlinearctl $*: exit $rc, expected $want"
}

# _lvm_ctl_json ARGS...: _lvm_ctl, its stdout alone (the JSON) also in
# $FL_TMP/ctl.json; its status
_lvm_ctl_json() {
	local w=$FL_TMP/ctl-json

	# remade each time: FL_CTL may be another (tests/lvm/lvm-path)
	# shellcheck disable=SC2016
	printf '#!/bin/sh\n"%s" "$@" >"%s"\nrc=$?\ncat "%s"\nexit $rc\n' \
		"$FL_CTL" "$FL_TMP/ctl.json" "$FL_TMP/ctl.json" >"$w"
	chmod +x "$w"
	FL_CTL=$w _lvm_ctl "$@"
}

# _dm_types NAME: the target types of dm device NAME's live table, one
# line (one fork: dmsetup; bash picks the third field of each line)
_dm_types() {
	local -a tl
	local l t out=

	mapfile -t tl < <(dmsetup table "$1")
	for l in "${tl[@]}"; do
		read -r _ _ t _ <<<"$l"
		out+=${out:+ }$t
	done
	echo "$out"
}

# _dm_expect_settled NAME WHAT: dm device NAME runs (not suspended) and
# has no inactive table
_dm_expect_settled() {
	_expect_eq "$(dmsetup info -c --noheadings --separator , -o suspended,tables_loaded "$1" 2>&1)" \
		"Active,Live" "$2: $1 suspended, tables"
}

# _dm_snapshot FILE [SKIP]: every dm device's name and attributes (live
# and inactive table, suspended, read-only) and, unless its name matches
# the extended regex SKIP, its live table, sorted: for a diff before and
# after (two dmsetup runs: under TCG each fork counts)
_dm_snapshot() {
	{
		dmsetup info -c --noheadings --separator ' ' -o name,attr
		dmsetup table | awk -v skip="${2:-}" '{ n = $1; sub(/:$/, "", n) } skip == "" || n !~ skip'
	} | LC_ALL=C sort >"$1"
}

# _dm_expect_snapshot BEFORE [SKIP] WHAT: _dm_snapshot now is BEFORE
_dm_expect_snapshot() {
	_dm_snapshot "$FL_TMP/snap.now" "$2"
	diff -u "$1" "$FL_TMP/snap.now" >"$FL_TMP/snap.diff" ||
		{ cat "$FL_TMP/snap.diff"; _fail "$3: dm devices changed (diff above)"; }
	_log "ok: $3: no dm device changed ($(wc -l <"$1") lines compared)"
}

# _dm_ro_create NAME TABLE: a read-only dm device (dmsetup create -r),
# removed at the end
_dm_ro_create() {
	echo "$1" >>"$FL_TMP/dms"
	dmsetup create -r "$1" --table "$2" || _fail "dmsetup create -r $1 '$2' failed"
}

# _expect_ro DEV WHAT: DEV is read-only: blockdev --getro says 1 and a
# direct write fails
_expect_ro() {
	_expect_eq "$(blockdev --getro "$1")" 1 "$2: blockdev --getro $1"
	if dd if=/dev/zero of="$1" bs=4k count=1 oflag=direct conv=notrunc status=none 2>"$FL_TMP/dd.err"; then
		_fail "$2: a direct write to $1 succeeded"
	fi
	_log "ok: $2: a direct write to $1 failed: $(cat "$FL_TMP/dd.err")"
}

# _expect_rw DEV WHAT: DEV is writable: --getro 0 and a direct write works
# (of what is there already: the data stays)
_expect_rw() {
	_expect_eq "$(blockdev --getro "$1")" 0 "$2: blockdev --getro $1"
	dd if="$1" of="$FL_TMP/rw.blk" bs=4k count=1 iflag=direct status=none ||
		_fail "$2: reading $1 failed"
	dd if="$FL_TMP/rw.blk" of="$1" bs=4k count=1 oflag=direct conv=notrunc status=none ||
		_fail "$2: a direct write to $1 failed"
	_log "ok: $2: a direct write to $1 worked"
}

# ---- fastlinearctl run by the test itself ------------------------------
# (tests/lvm/fault-injection, tests/lvm/signals: under LD_PRELOAD, in the
# background to be killed, hundreds of times; each fork counts under TCG,
# so the polls here are bash builtins)

# _lvm_ctl_ns PROG FAKE: $FL_TMP/ctl-ns, fastlinearctl with FAKE bound
# over PROG (/sbin/lvmconfig, /sbin/modprobe: it runs them at those paths,
# not through PATH) in a mount namespace of its own; run it as
# FL_CTL=$FL_TMP/ctl-ns _lvm_ctl ...  PROG is a link (to lvm, to kmod):
# the bind covers what it links to, so FAKE must not run that
_lvm_ctl_ns() {
	# shellcheck disable=SC2016
	printf '#!/bin/sh\nexec unshare -m sh -c '\''mount --bind "$0" "$1" && shift && exec "$@"'\'' "%s" "%s" "%s" "$@"\n' \
		"$2" "$1" "$FL_CTL" >"$FL_TMP/ctl-ns"
	chmod +x "$FL_TMP/ctl-ns"
}

# _lvm_cookies: how many udev cookies (dm's System V semaphores) exist;
# one a run left behind is a semaphore nobody would ever remove
_lvm_cookies() {
	dmsetup udevcookies 2>&1 | awk 'NR > 1' | wc -l
}

# _lvm_ctl_argv: FL_CTL_ARGV, what _lvm_ctl runs (fastlinearctl with the
# test's --config and --state-dir), for a test that runs it itself
_lvm_ctl_argv() {
	# shellcheck disable=SC2034
	FL_CTL_ARGV=("$FL_CTL" --config "$FASTLINEAR_CONF" --state-dir "$FASTLINEAR_STATE_DIR")
}

# _lvm_no_queue: udev queues no conversion (95-fastlinear.rules emptied;
# _group_cleanup removes it): every resume's event would start a job of
# its own, competing for the VG lock and the CPU, in a test that is about
# what one fastlinearctl leaves behind
_lvm_no_queue() {
	: >/run/udev/rules.d/95-fastlinear.rules
	udevadm control --reload || _fail "udevadm control --reload failed"
}

# _lvm_dm_state LV: suspended,tables_loaded,readonly of the LV's dm device
# as dmsetup says them: "Active,Live,Writeable" is a running read-write
# device with no inactive table
_lvm_dm_state() {
	dmsetup info -c --noheadings --separator , -o suspended,tables_loaded,readonly \
		"$FL_VG-$1" 2>&1
}

# _lvm_whole LV N: the target type of the LV's live table when it has N
# lines, all of that one type; else its types, status 1
_lvm_whole() {
	local -a tl
	local l types='' one=''

	mapfile -t tl < <(dmsetup table "$FL_VG-$1" 2>&1)
	for l in "${tl[@]}"; do
		read -r _ _ l _ <<<"$l"
		types+="$l "
		[ -z "$one" ] && one=$l
		[ "$l" = "$one" ] || one=-
	done
	if [ "${#tl[@]}" != "$2" ] || [ "$one" = - ]; then
		echo "$types(${#tl[@]} lines)"
		return 1
	fi
	echo "$one"
}

# _lvm_alive PID: the process is there and not a zombie (builtins only)
_lvm_alive() {
	local s

	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

# _lvm_nap SECS: sleep SECS (decimals: 0.0137) without a fork: a read
# that times out on a FIFO nobody writes
_lvm_nap() {
	if [ -z "${FL_NAP_FD:-}" ]; then
		mkfifo "$FL_TMP/nap" || _fail "mkfifo failed"
		exec {FL_NAP_FD}<>"$FL_TMP/nap"
	fi
	read -r -t "$1" -u "$FL_NAP_FD" || :
}

# _lvm_wait_pid PID SECS: _wait_pid (common.sh) polled every 10 ms with
# builtins; PID's exit status
_lvm_wait_pid() {
	local i

	for ((i = 0; i < $2 * 100; i++)); do
		_lvm_alive "$1" || break
		_lvm_nap 0.01
	done
	_wait_pid "$1" 1
}

# _lvm_fio_start NAME ARGS...: fio in the background (in FL_TMP), its
# output in $FL_TMP/fio-NAME.out, its pid in FL_FIO_PID, until
# _lvm_fio_stop: give it --time_based and a --runtime longer than the test
_lvm_fio_start() {
	local name=$1

	shift
	(cd "$FL_TMP" && exec fio --name="$name" --verify_state_save=0 "$@") \
		>"$FL_TMP/fio-$name.out" 2>&1 &
	FL_FIO_PID=$!
	echo "$FL_FIO_PID" >"$FL_TMP/fio-pid"
}

# _lvm_fio_alive NAME: fail unless _lvm_fio_start's fio still runs (with
# --verify_fatal=1 a verify error ends it)
_lvm_fio_alive() {
	_lvm_alive "$FL_FIO_PID" && return 0
	cat "$FL_TMP/fio-$1.out"
	_fail "fio $1 ended early (a verify error?)"
}

# _lvm_fio_stop NAME: stop that fio (SIGINT: it ends its jobs and
# reports); fail unless it ran until then and reported no error
_lvm_fio_stop() {
	local out=$FL_TMP/fio-$1.out rc=0

	_lvm_fio_alive "$1"
	kill -INT "$FL_FIO_PID"
	_wait_pid "$FL_FIO_PID" "$(_secs 60)" || rc=$?
	rm -f "$FL_TMP/fio-pid"
	sed 's/^/  fio| /' "$out"
	grep -q "err= 0:" "$out" || _fail "fio $1 reported errors (exit $rc)"
	if grep -qiE 'verify failed|bad magic|bad header|crc32c: verify|verify: ' "$out"; then
		_fail "fio $1: verify errors (exit $rc)"
	fi
	_fio_rates "$out"
	_log "ok: fio $1 clean (stopped, exit $rc): $FIO_RATES"
}

# _lvm_fio_kill: end _lvm_fio_start's fio, if any (a test failing)
_lvm_fio_kill() {
	local pid

	pid=$(cat "$FL_TMP/fio-pid" 2>/dev/null) || return 0
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$FL_TMP/fio-pid"
}

# ---- testsB: tests/lvm/read-ahead, soft-ro, config-errors, json-names ----

# _lvm_cases FUNC...: each FUNC in a subshell of its own (its _fail ends
# that case only, and a case changes no variable of the test), each
# result logged; then fail naming every case that failed: one run shows
# each defect, not only the first.  A case must not call _lvm_defer (the
# subshell's EXIT trap would run it when the case ends).
_lvm_cases() {
	local c
	local -a bad=()

	for c in "$@"; do
		_log "---- case $c"
		if ("$c"); then
			_log "---- case $c: ok"
		else
			_log "---- case $c: FAILED"
			bad+=("$c")
		fi
	done
	[ "${#bad[@]}" = 0 ] || _fail "${#bad[@]} of $# cases failed: ${bad[*]}"
}

# _expect_ra DEV SECTORS WHAT: DEV's read-ahead (blockdev --getra, in
# 512-byte sectors) is SECTORS
_expect_ra() {
	_expect_eq "$(blockdev --getra "$1")" "$2" "$3: read-ahead of $1"
}

# _lvm_ctl_cfg SECS CONFIG ARGS...: _lvm_ctl with CONFIG as its only
# --config and a limit of SECS seconds (scaled), 124 when it was still
# running then; its output in $FL_TMP/ctl.out and the log; its status
_lvm_ctl_cfg() {
	local secs=$1 conf=$2 rc=0

	shift 2
	_log "+ fastlinearctl --config $conf $* (limit ${secs}s)"
	timeout "$(_secs "$secs")" "$FL_CTL" --config "$conf" \
		--state-dir "$FASTLINEAR_STATE_DIR" "$@" >"$FL_TMP/ctl.out" 2>&1 </dev/null || rc=$?
	_lvm_indent "  | " <"$FL_TMP/ctl.out"
	_log "  exit $rc"
	return "$rc"
}

# _dm_raw_create NAME TABLE: a dm device named with NAME's bytes as they
# are (dmsetup --manglename none: no \xNN mangling by libdm), removed when
# the test ends (the names, any byte but NUL and '/', kept NUL-separated)
_dm_raw_create() {
	if [ ! -e "$FL_TMP/dms-raw" ]; then
		: >"$FL_TMP/dms-raw"
		_lvm_defer _dm_raw_cleanup
	fi
	printf '%s\0' "$1" >>"$FL_TMP/dms-raw"
	dmsetup --manglename none create "$1" --table "$2" ||
		_fail "dmsetup --manglename none create $(printf '%q' "$1") '$2' failed"
}

# _dm_raw_cleanup: remove _dm_raw_create's devices
_dm_raw_cleanup() {
	local n

	[ -e "$FL_TMP/dms-raw" ] || return 0
	while IFS= read -r -d '' n; do
		dmsetup --manglename none remove --retry "$n" >/dev/null 2>&1
	done <"$FL_TMP/dms-raw"
	rm -f "$FL_TMP/dms-raw"
}

# ---- tests/lvm/cookie-fail, foreign-inactive, pin-rename: the shim -----
# (tests/lib/fail-dm-ioctl.c: fastlinearctl's DM ioctls in
# $FL_TMP/ioctl.log, line N being DM ioctl N; its semaphore and flock()
# calls and the commands run at an ioctl in $FL_TMP/call.log)

# _lvm_shim: the shim built, its path in FL_SHIM
_lvm_shim() {
	FL_SHIM=$FL_TMP/faildm.so
	[ -e "$FL_SHIM" ] && return 0
	cc -shared -fPIC -O2 -Wall -Werror -o "$FL_SHIM" "$FL_TESTS_DIR/lib/fail-dm-ioctl.c" -ldl ||
		_fail "cannot build the LD_PRELOAD shim"
}

# _lvm_shim_start VAR=VALUE... -- ARGS...: fastlinearctl ARGS (with the
# test's --config and --state-dir) in the background under the shim, for
# fastlinearctl alone, with the shim's variables VAR=VALUE (FL_FAIL_IOCTL,
# FL_EXEC_IOCTL...), its output in $FL_TMP/ctl.out, the logs emptied
# first; its pid in FL_SHIM_PID
_lvm_shim_start() {
	local -a env=()

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	_lvm_shim
	_lvm_ctl_argv
	: >"$FL_TMP/ioctl.log"
	: >"$FL_TMP/call.log"
	_log "+ ${env[*]}${env[*]:+ }fastlinearctl $* (under the shim)"
	env "${env[@]}" FL_FAIL_PROG=fastlinearctl FL_IOCTL_LOG="$FL_TMP/ioctl.log" \
		FL_CALL_LOG="$FL_TMP/call.log" LD_PRELOAD="$FL_SHIM" \
		timeout "$(_secs 120)" "${FL_CTL_ARGV[@]}" "$@" >"$FL_TMP/ctl.out" 2>&1 &
	FL_SHIM_PID=$!
}

# _lvm_shim_wait: wait for _lvm_shim_start's fastlinearctl; its output
# and the shim's logs to the log; its status
_lvm_shim_wait() {
	local rc=0

	_lvm_wait_pid "$FL_SHIM_PID" "$(_secs 150)" || rc=$?
	_lvm_shim_show
	_log "  exit $rc"
	return "$rc"
}

# _lvm_shim_ctl VAR=VALUE... -- ARGS...: _lvm_shim_start, waited for; its
# status
_lvm_shim_ctl() {
	_lvm_shim_start "$@"
	_lvm_shim_wait
}

# _lvm_shim_show: the last run's output and logs, to the log (of the
# flock() calls that found the lock held, the first and the last only)
_lvm_shim_show() {
	_lvm_indent "  | " <"$FL_TMP/ctl.out"
	sed 's/ pid [0-9]* at [0-9.]*:/:/; s/^/  ioctl| /' "$FL_TMP/ioctl.log"
	awk 'NR == FNR { n += /^flock .*: failed: /; next }
		/^flock .*: failed: / {
			if (++m == 1 || m == n) print
			if (m == 1 && n > 2) print "(" n - 2 " more flock calls like it)"
			next
		}
		{ print }' "$FL_TMP/call.log" \
		"$FL_TMP/call.log" | sed 's/ pid [0-9]* at [0-9.]*:/:/; s/^/  call| /'
}

# _lvm_shim_at STRING: the index of the last run's first DM ioctl whose
# log line holds STRING (" DM_TABLE_LOAD ", " DM_DEV_SUSPEND suspend "),
# found by name and flags rather than by place: a tool that orders its
# ioctls otherwise still gets the step meant
_lvm_shim_at() {
	local l

	while read -r l; do
		[[ $l == *"$1"* ]] && { echo "${l%% *}"; return 0; }
	done <"$FL_TMP/ioctl.log"
	_fail "no DM ioctl with '$1' in the last run's log"
}

# _lvm_shim_call_at KIND STRING: the index (among its calls of KIND:
# semget, semop, semctl, flock) of the last run's first call of KIND
# whose line holds STRING
_lvm_shim_call_at() {
	local l k i

	while read -r k i l; do
		[ "$k" = "$1" ] && [[ $l == *"$2"* ]] && { echo "$i"; return 0; }
	done <"$FL_TMP/call.log"
	_fail "no $1 call with '$2' in the last run's log"
}

# _lvm_shim_did STRING: the last run did a DM ioctl whose line holds STRING
_lvm_shim_did() {
	_lvm_has "$FL_TMP/ioctl.log" "$1"
}

# _lvm_shim_waits PATH: _lvm_shim_start's fastlinearctl waits for the
# flock on PATH (held by the test): a flock() call of it on PATH found it
# held or blocks; within 60 s, and it must still run
_lvm_shim_waits() {
	local i l want

	want=$(readlink -f "$1")
	for ((i = 0; i < $(_secs 60) * 20; i++)); do
		while read -r l; do
			[[ $l == "flock "*" $want LOCK_EX"* ]] || continue
			[[ $l == *": waits" || $l == *": failed: "* ]] || continue
			_lvm_alive "$FL_SHIM_PID" ||
				{ _lvm_shim_wait; _fail "fastlinearctl ended instead of waiting for $1"; }
			_log "fastlinearctl (pid $FL_SHIM_PID) waits for $1"
			return 0
		done <"$FL_TMP/call.log"
		_lvm_alive "$FL_SHIM_PID" || break
		_lvm_nap 0.05
	done
	_lvm_shim_wait
	_fail "fastlinearctl did not wait for the lock $1"
}

# _lvm_dev_lock NAME: the lock fastlinearctl takes for a dm device that
# is not an LV: lock-MAJ_MIN in its state directory
_lvm_dev_lock() {
	local mm

	mm=$(dmsetup info -c --noheadings -o major,minor --separator _ "$1") ||
		_fail "no dm device $1"
	echo "$FASTLINEAR_STATE_DIR/lock-$mm"
}

# _lvm_sems: the System V semaphore sets (key, id, count), one a line
_lvm_sems() {
	awk 'NR > 1 { print $1, $2, $4 }' /proc/sysvipc/sem | LC_ALL=C sort
}
