#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Shared setup and teardown for the dm-fastlinear tests.  A test file
# sources nothing itself: tests/run sources this library and the test in a
# subshell, calls test_run, then _cleanup.  Helpers that fail call _fail,
# which ends the test.

FL_NULLB_CFS=/sys/kernel/config/nullb
# the target a test's tables map through (tests/run: TEST@TARGET)
FL_TARGET=${FL_TARGET:-fastlinear}

# _load_modules [keep]: dm-mod (FL_DM_MOD if set), configfs, null_blk
# without devices, brd (when FL_BRD_MB is set), tracefs, ext4 and the
# target, each only where it is not there yet (each modprobe or mount is a
# second or more under TCG).  The suite and the benchmarks replace a
# loaded dm-fastlinear by FL_MODULE (with FL_MODPARAMS).  With "keep"
# (bench/cgroup-exp, bench/demo-run, which leave a host's modules as they
# are) a loaded dm-fastlinear stays, and without a readable FL_MODULE the
# installed one is loaded.
_load_modules() {
	local keep=${1:-}

	if [ -e /sys/module/dm_mod ]; then
		if [ -n "${FL_DM_MOD:-}" ] && [ -z "$keep" ]; then
			echo "dm-mod already loaded, cannot insmod $FL_DM_MOD"
			return 1
		fi
	elif [ -n "${FL_DM_MOD:-}" ]; then
		insmod "$FL_DM_MOD" || return 1
	else
		modprobe dm-mod || return 1
	fi
	[ -e /sys/module/configfs ] || modprobe configfs 2>/dev/null
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	[ -e /sys/module/null_blk ] || modprobe null_blk nr_devices=0 || return 1
	[ -z "${FL_BRD_MB:-}" ] || [ -e /sys/module/brd ] ||
		modprobe brd rd_nr=4 rd_size=$((FL_BRD_MB * 1024)) || return 1
	[ -e /sys/kernel/tracing/kprobe_events ] ||
		mount -t tracefs none /sys/kernel/tracing 2>/dev/null
	# the kernel's own autoload may not reach modprobe (ext4 for mkfs)
	[ -e /sys/module/ext4 ] || modprobe ext4 2>/dev/null
	if [ -e /sys/module/dm_fastlinear ]; then
		[ -n "$keep" ] && return 0
		rmmod dm_fastlinear || return 1
	fi
	if [ -n "$keep" ] && [ ! -r "${FL_MODULE:-}" ]; then
		modprobe dm-fastlinear
		return
	fi
	# shellcheck disable=SC2086
	insmod "$FL_MODULE" ${FL_MODPARAMS:-}
}

# _secs N: N seconds times FL_TIMEOUT_SCALE (default 1), for the limits
# tests put on their own fio and dd runs: a debug kernel under emulation
# is several times slower.
_secs() {
	echo $(($1 * ${FL_TIMEOUT_SCALE:-1}))
}

# Messages go to the test's log; only tests/run writes the summary lines.
_log() { echo "$*"; }

_fail() {
	echo "FAIL: $*"
	exit 1
}

_skip() {
	echo "SKIP: $*"
	exit 77
}

# _expect_eq ACTUAL EXPECTED WHAT
_expect_eq() {
	if [ "$1" != "$2" ]; then
		_fail "$3: got '$1', expected '$2'"
	fi
	_log "ok: $3 = '$1'"
}

# _within ACTUAL EXPECTED PERCENT WHAT: |ACTUAL-EXPECTED| <= PERCENT% of EXPECTED
_within() {
	_num "$1" "$4"
	_num "$2" "$4"
	awk -v a="$1" -v e="$2" -v p="$3" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= e * p / 100) }' ||
		_fail "$4: got $1, expected $2 +-$3%"
	_log "ok: $4 = $1 (expected $2 +-$3%)"
}

_have_program() {
	command -v "$1" >/dev/null || _skip "$1 not installed"
}

# Lower device kinds every data-path test runs on (FL_LOWERS overrides).
_lower_kinds() {
	echo "${FL_LOWERS:-nullb brd}"
}

# _nullb_create NAME SIZE_MB [attr=value ...]: a configfs null_blk device,
# memory-backed unless told otherwise.  Prints its path.
_nullb_create() {
	local name=$1 size=$2 kv dir poll=0
	shift 2
	dir=$FL_NULLB_CFS/$name
	mkdir "$dir" || _fail "cannot create null_blk $name"
	echo "$name" >>"$FL_TMP/nullbs"
	echo "$size" >"$dir/size"
	echo 1 >"$dir/memory_backed"
	for kv in "$@"; do
		echo "${kv#*=}" >"$dir/${kv%%=*}" || _fail "null_blk $name: cannot set $kv"
		[ "${kv%%=*}" = poll_queues ] && poll=${kv#*=}
	done
	echo 1 >"$dir/power" || _fail "cannot power on null_blk $name"
	udevadm settle 2>/dev/null
	[ -b "/dev/$name" ] || _fail "/dev/$name did not appear"
	# 6.1's null_poll() allocates the backing page of a first write with
	# GFP_NOIO under the RCU read lock that iocb_bio_iopoll() holds (BUG:
	# sleeping function called from invalid context, on the debug
	# kernel): a device made to poll is written once first, unpolled.
	# (Asked for, not read back: configfs shows null_blk's default of 1.)
	if [ "$poll" -gt 0 ]; then
		dd if=/dev/zero of="/dev/$name" bs=1M count="$size" oflag=direct status=none ||
			_fail "cannot fill null_blk $name"
	fi
	echo "/dev/$name"
}

# _lower_create KIND [SIZE_MB]: a fresh lower device of that kind.  brd
# devices are fixed by tests/run (FL_BRD_MB each); tests take them in turn.
_lower_create() {
	local kind=$1 size=${2:-64} n

	case $kind in
	nullb)
		n=$(cat "$FL_TMP/nullbs" 2>/dev/null | wc -l)
		_nullb_create "flnb$n" "$size"
		;;
	brd)
		n=$(cat "$FL_TMP/brds" 2>/dev/null | wc -l)
		[ -b "/dev/ram$n" ] || _fail "no /dev/ram$n (tests/run loads brd)"
		echo "ram$n" >>"$FL_TMP/brds"
		echo "/dev/ram$n"
		;;
	*)
		_fail "unknown lower device kind $kind"
		;;
	esac
}

# _table LEN DEV OFFSET [TARGET]: a one-line table of LEN sectors at OFFSET
# on DEV through TARGET, by default the target under test, FL_TARGET
# (tests/run): fastlinear, linear, or striped: one stripe (stripe_map()'s
# path) of 128 KiB chunks, so that the tests' aligned I/Os of up to 128 KiB
# are not split and the I/O counts of both devices compare.
_table() {
	case ${4:-$FL_TARGET} in
	striped) echo "0 $1 striped 1 256 $2 $3" ;;
	*) echo "0 $1 ${4:-$FL_TARGET} $2 $3" ;;
	esac
}

# _dm_create NAME TABLE: create a dm device, remembered for cleanup.
_dm_create() {
	echo "$1" >>"$FL_TMP/dms"
	dmsetup create "$1" --table "$2" || _fail "dmsetup create $1 '$2' failed"
}

# _dm_dev NAME: the device node of a dm device (udev may not run).
_dm_dev() {
	echo "/dev/$(dmsetup info -c --noheadings -o blkdevname "$1")"
}

# _fl_mode NAME: the association mode in the status INFO of fastlinear
# device NAME (its first line)
_fl_mode() {
	dmsetup status "$1" | sed -n '1s/.* fastlinear blkg_assoc=\([a-z]*\) .*/\1/p'
}

_dm_remove() {
	dmsetup remove --retry "$1" || _fail "dmsetup remove $1 failed"
	sed -i "/^$1\$/d" "$FL_TMP/dms"
}

_sectors() {
	blockdev --getsz "$1"
}

_fl_refcnt() {
	cat /sys/module/dm_fastlinear/refcnt
}

# _slabs [REGEX]: "cache objects" for the slab caches whose names match
# (default: the bio caches of the biosets, bio-N, and dm's), each shrunk first: that empties the
# per-CPU slabs (and KASAN's quarantine), so what is left is what is
# allocated.  The small kmalloc caches, where the target's context lives,
# move by hundreds with kprobes, cgroups and io_uring workers: only the
# table fuzzing, which uses none of those, counts them.
_slabs() {
	local re=${1:-^(bio-[0-9]|dm_)} c
	for c in $(awk -v re="$re" '$1 ~ re { print $1 }' /proc/slabinfo); do
		echo 1 >"/sys/kernel/slab/$c/shrink" 2>/dev/null
	done
	awk -v re="$re" '$1 ~ re { print $1, $2 }' /proc/slabinfo | sort
}

# _slabs_grown BEFORE AFTER SLACK: the caches with more than SLACK objects
# more in AFTER than in BEFORE (a cache that is new counts from 0)
_slabs_grown() {
	join -a 2 -e 0 -o 0,1.2,2.2 "$1" "$2" |
		awk -v s="$3" '$3 - $2 > s { printf "%s %d->%d ", $1, $2, $3 }'
}

# _pattern FILE BYTES: a file of random data.
_pattern() {
	head -c "$2" /dev/urandom >"$1"
}

# _write_at DEV OFFSET_SECTORS FILE / _read_at DEV OFFSET_SECTORS BYTES FILE:
# direct I/O, so the page cache of one device cannot mask the other.
_write_at() {
	dd if="$3" of="$1" bs=512 seek="$2" oflag=direct conv=notrunc,fsync status=none ||
		_fail "write to $1 at sector $2 failed"
}

_read_at() {
	dd if="$1" of="$4" bs=512 skip="$2" count=$(($3 / 512)) iflag=direct status=none ||
		_fail "read from $1 at sector $2 failed"
}

# _fio NAME ARGS...: run fio (in FL_TMP: the guest's source tree is
# read-only), fail the test on any error.  Output in $FL_TMP/fio-NAME.out.
_fio() {
	local name=$1 out=$FL_TMP/fio-$1.out
	shift
	# exit 128 is fio's after SIGINT: a failure unless _fio_stop sent it
	(cd "$FL_TMP" && fio --name="$name" --verify_state_save=0 "$@") >"$out" 2>&1 ||
		{ [ $? = 128 ] && [ -e "$FL_TMP/fio-$name.stopped" ]; } ||
		{ cat "$out"; _fail "fio $name failed"; }
	grep -q "err= 0:" "$out" || { cat "$out"; _fail "fio $name reported errors"; }
	_log "ok: fio $name: $(grep -E '^ +(read|write): IOPS' "$out" | tr -s ' ' | tr '\n' ' ')"
}

_cleanup() {
	local n

	# a group's own teardown first (tests/lib/lvm.sh: VGs, PVs, udev rules)
	if declare -F _group_cleanup >/dev/null; then
		_group_cleanup
	fi
	_kprobe_cleanup
	# a count cut short leaves udev stopped (_kprobe_count)
	udevadm control --start-exec-queue 2>/dev/null
	_cg_cleanup
	awk -v t="$FL_TMP" 'index($2, t) == 1 { print $2 }' /proc/mounts |
		xargs -r umount

	if [ -s "$FL_TMP/dms" ]; then
		tac "$FL_TMP/dms" | while read -r n; do
			dmsetup remove --retry "$n" >/dev/null 2>&1
		done
	fi
	if [ -s "$FL_TMP/nullbs" ]; then
		while read -r n; do
			echo 0 >"$FL_NULLB_CFS/$n/power" 2>/dev/null
			rmdir "$FL_NULLB_CFS/$n"
		done <"$FL_TMP/nullbs"
	fi
	rm -f "$FL_TMP/dms" "$FL_TMP/nullbs" "$FL_TMP/brds"
}

# ---- cgroup v2 ---------------------------------------------------------

FL_CGROOT=/sys/fs/cgroup

# _devno DEV: MAJ:MIN of a block device, as io.max and io.stat key it.
_devno() {
	local d
	d=$(basename "$(readlink -f "$1")")
	cat "/sys/class/block/$d/dev"
}

# _cg_create NAME: a child cgroup of the root with io and memory (cgroup
# writeback is attributed only with both).  Prints its path.
_cg_create() {
	local cg=$FL_CGROOT/fltest-$1

	echo "+io +memory" >"$FL_CGROOT/cgroup.subtree_control" ||
		_fail "cannot enable io and memory controllers"
	mkdir "$cg" || _fail "cannot create cgroup $cg"
	echo "$cg" >>"$FL_TMP/cgroups"
	echo "$cg"
}

# _cg_run CGROUP CMD ARGS...: run CMD inside CGROUP.
_cg_run() {
	local cg=$1
	shift
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# _cg_stats CGROUP MAJ:MIN KEY...: the KEYs (rbytes, wbytes, rios, wios,
# ...) of the device in the cgroup's io.stat on one line, 0 where it has
# no line.  One process for them all: under TCG every fork counts.
_cg_stats() {
	local cg=$1 d=$2

	shift 2
	awk -v d="$d" -v keys="$*" '$1 == d { for (i = 2; i <= NF; i++) {
		split($i, kv, "="); v[kv[1]] = kv[2] } }
		END { n = split(keys, k)
		for (i = 1; i <= n; i++) printf "%s%.0f", (i > 1 ? " " : ""), v[k[i]]
		print "" }' "$cg/io.stat"
}

# _cg_stat CGROUP DEV KEY: KEY of block device DEV in the cgroup's io.stat.
_cg_stat() {
	_cg_stats "$1" "$(_devno "$2")" "$3"
}

_cg_cleanup() {
	local cg

	[ -s "$FL_TMP/cgroups" ] || return 0
	tac "$FL_TMP/cgroups" | while read -r cg; do
		# move stragglers to the root, then remove
		while read -r pid; do
			echo "$pid" >"$FL_CGROOT/cgroup.procs" 2>/dev/null
		done <"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null
	done
	rm -f "$FL_TMP/cgroups"
}

# ---- kprobe hit counts -------------------------------------------------

FL_TRACING=/sys/kernel/tracing

# _kprobe_add NAME FUNC: a kprobe event counting calls to FUNC.
_kprobe_add() {
	# Enabling an event also hooks sched_switch to record task names
	# (record-cmd), patching code that other CPUs run with interrupts off:
	# under TCG that has livelocked a guest (a vCPU looping on a stale
	# int3 in __schedule, the patching CPU waiting for it).  The counts
	# need no task names.
	echo 0 >"$FL_TRACING/options/record-cmd"
	echo "p:flprobe/$1 $2" >>"$FL_TRACING/kprobe_events" ||
		_fail "cannot add a kprobe on $2"
	echo "$1" >>"$FL_TMP/kprobes"
	echo 1 >"$FL_TRACING/events/flprobe/$1/enable"
}

# _kprobe_hits NAME: calls counted since the probe was added.
_kprobe_hits() {
	awk -v n="$1" '$1 == n || $1 == "flprobe/" n { print $2 }' "$FL_TRACING/kprobe_profile"
}

# _kprobe_count "FUNC ..." CMD...: run CMD (its output to stderr) with a
# kprobe on each FUNC; prints the hits, in FUNC order, on one line, or
# nothing and CMD's status if CMD failed.
_kprobe_count() {
	local funcs=$1 f hits='' rc=0
	shift
	# udev probes a device just created or closed after a write (blkid),
	# with I/O of its own: not while counting
	udevadm settle 2>/dev/null
	udevadm control --stop-exec-queue 2>/dev/null
	for f in $funcs; do
		_kprobe_add "kc_$f" "$f"
	done
	"$@" >&2 || rc=$?
	for f in $funcs; do
		hits="$hits${hits:+ }$(_kprobe_hits "kc_$f")"
	done
	_kprobe_cleanup
	udevadm control --start-exec-queue 2>/dev/null
	udevadm settle 2>/dev/null
	[ "$rc" = 0 ] && echo "$hits"
	return "$rc"
}

_kprobe_cleanup() {
	local n

	[ -s "$FL_TMP/kprobes" ] || return 0
	while read -r n; do
		echo 0 >"$FL_TRACING/events/flprobe/$n/enable"
		echo "-:flprobe/$n" >>"$FL_TRACING/kprobe_events"
	done <"$FL_TMP/kprobes"
	rm -f "$FL_TMP/kprobes"
}

# ---- blkcg tests: cgroups, background jobs, timing ---------------------

# _cg_iomax CGROUP DEV LIMITS: set CGROUP's io.max on DEV, e.g. "wbps=1048576".
_cg_iomax() {
	echo "$(_devno "$2") $3" >"$1/io.max" ||
		_fail "cannot set io.max '$3' on $2 for $1"
	_log "io.max of $(basename "$1"): $(cat "$1/io.max" | tr '\n' ' ')"
}

# _cg_fio CGROUP NAME ARGS...: _fio, run inside CGROUP.
_cg_fio() {
	local cg=$1
	shift
	(
		echo "$BASHPID" >"$cg/cgroup.procs" || _fail "cannot enter $cg"
		_fio "$@"
	) || exit 1
}

# _fio_stop NAME CGROUP: stop the _cg_fio NAME running in CGROUP, its only
# fio, with SIGINT: it ends its jobs and reports, and _fio takes its exit
# 128 for success
_fio_stop() {
	local pid

	: >"$FL_TMP/fio-$1.stopped"
	while read -r pid; do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = fio ] && kill -INT "$pid" 2>/dev/null
	done <"$2/cgroup.procs"
}

# _cg_evacuate CGROUP: move every process of CGROUP to the root cgroup.
_cg_evacuate() {
	local pid i

	for ((i = 0; i < 50; i++)); do
		[ -n "$(cat "$1/cgroup.procs")" ] || return 0	# cgroupfs sizes are 0
		while read -r pid; do
			echo "$pid" >"$FL_CGROOT/cgroup.procs" 2>/dev/null
		done <"$1/cgroup.procs"
	done
	_fail "cannot move the processes out of $1: $(cat "$1/cgroup.procs" | tr '\n' ' ')"
}

# _cg_remove CGROUP: rmdir a cgroup made by _cg_create; returns rmdir's
# status (a failure is left to the caller).
_cg_remove() {
	rmdir "$1" || return 1
	sed -i "\\|^$1\$|d" "$FL_TMP/cgroups"
}

# _cg_wait_stat CGROUP DEV KEY MIN SECS: wait at most SECS seconds for KEY
# of DEV in CGROUP's io.stat to reach MIN (e.g. all of a job's bios
# submitted).  Returns 1 on a timeout, without failing the test (for use
# while a device is suspended).
_cg_wait_stat() {
	local i

	for ((i = 0; i < $5 * 10; i++)); do
		[ "$(_cg_stat "$1" "$2" "$3")" -ge "$4" ] && return 0
		sleep 0.1
	done
	return 1
}

# _alive PID: the process exists and is not a zombie.
_alive() {
	local st

	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ]
}

# _wait_pid PID SECS: wait at most SECS seconds for the background job PID
# (a child of the test's shell) and return its exit status.  A job still
# running then fails the test, with its kernel stack in the log.
_wait_pid() {
	local pid=$1 secs=$2 i c

	for ((i = 0; i < secs * 10; i++)); do
		_alive "$pid" || break
		sleep 0.1
	done
	if _alive "$pid"; then
		_log "process $pid ($(cat "/proc/$pid/comm")) still running after ${secs}s:"
		cat "/proc/$pid/stack" 2>/dev/null
		for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
			_log "child $c ($(cat "/proc/$c/comm" 2>/dev/null)):"
			cat "/proc/$c/stack" 2>/dev/null
		done
		_fail "process $pid did not finish within ${secs}s (hang?)"
	fi
	wait "$pid"
}

# _fio_msec NAME JOB: the run time in ms fio reported for JOB (its first
# data direction) in the output _fio or _cg_fio kept for NAME.
_fio_msec() {
	awk -v j="$2" 'index($0, j ": (groupid=") == 1 { f = 1; next }
		f && match($0, /\/[0-9]+msec\)/) { print substr($0, RSTART + 1, RLENGTH - 6); exit }' \
		"$FL_TMP/fio-$1.out"
}

# _now / _since START: wall-clock seconds, and seconds since _now gave START.
_now() {
	date +%s.%N
}

_since() {
	awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }'
}

# _num VALUE WHAT: fail unless VALUE is a number (awk compares anything
# else as a string: "FAIL: ..." >= 4 holds)
_num() {
	[[ $1 =~ ^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || _fail "$2: got '$1', not a number"
}

# _at_least ACTUAL MIN WHAT / _at_most ACTUAL MAX WHAT (numbers, decimals too)
_at_least() {
	_num "$1" "$3"
	awk -v a="$1" -v m="$2" 'BEGIN { exit !(a >= m) }' ||
		_fail "$3: got $1, expected at least $2"
	_log "ok: $3 = $1 (>= $2)"
}

_at_most() {
	_num "$1" "$3"
	awk -v a="$1" -v m="$2" 'BEGIN { exit !(a <= m) }' ||
		_fail "$3: got $1, expected at most $2"
	_log "ok: $3 = $1 (<= $2)"
}

# _within_factor GOT EXPECTED F MSG: GOT between EXPECTED / F and
# EXPECTED * F, for ratios, where a percentage would not be symmetric
_within_factor() {
	_num "$1" "$4"
	_num "$2" "$4"
	awk -v a="$1" -v e="$2" -v f="$3" 'BEGIN { exit !(a * f >= e && a <= e * f) }' ||
		_fail "$4: got $1, expected $2 within a factor of $3"
	_log "ok: $4 = $1 ($2 within a factor of $3)"
}

# ---- blk-cgroup controllers below a dm device (tests/blkcg/iocost, bfq,
# io-latency, io-prio) ---------------------------------------------------

# _iocost_model DEVNO IOPS: iocost's linear model for the device: IOPS
# random or sequential reads a second, writes at 20000
_iocost_model() {
	echo "$1 ctrl=user model=linear rbps=4000000000 rseqiops=$2 rrandiops=$2 wbps=400000000 wseqiops=20000 wrandiops=20000" \
		>"$FL_CGROOT/io.cost.model" || _fail "cannot set io.cost.model"
	_log "io.cost.model: $(grep "^$1 " "$FL_CGROOT/io.cost.model")"
}

# _iocost_on DEVNO IOPS: iocost on the device with that model and vrate
# pinned at 100% (min=max=100): no latency heuristics
_iocost_on() {
	_iocost_model "$1" "$2"
	echo "$1 enable=1 ctrl=user min=100.00 max=100.00" \
		>"$FL_CGROOT/io.cost.qos" || _fail "cannot set io.cost.qos"
	_log "io.cost.qos: $(grep "^$1 " "$FL_CGROOT/io.cost.qos")"
}

# _cg_rbytes CGLO CGHI DEVNO: the two cgroups' rbytes on DEVNO, "LO HI"
_cg_rbytes() {
	echo "$(_cg_stats "$1" "$3" rbytes) $(_cg_stats "$2" "$3" rbytes)"
}

# _cg_share DEV LOWER CGLO CGHI SECS FIO_ARGS...: CGLO and CGHI read DEV at
# once (one time-based fio each, FIO_ARGS for both).  Prints "RATIO LO HI":
# the bytes each got on LOWER (io.stat's rbytes there) in a window of SECS
# seconds while both read, and HI over LO.  The window opens 0.3 s after
# both cgroups' first bytes below, not at the start: fio takes up to 2 s
# to start under emulation, and the cgroup that starts first has the
# device to itself until the other comes (iocost: a weight-100 cgroup got
# up to 155 of its reads in that time, twice the 800 one's, and its
# whole-run share went from 8 to 4; in the window 7.1-8.6).  Neither fio
# has a run time of its own: both read until the window has closed, then
# are stopped (_fio_stop), so how far apart a loaded host starts them does
# not matter (a fixed SECS + 5 s each failed on a loaded CI host, started
# over 4.7 s apart).  The first fio of a guest can take 5 s and more to
# start (its binary and libraries read from the host): up to 60 s
# (FL_TIMEOUT_SCALE'd) is waited for.  Fails unless each cgroup's bytes on DEV over
# the whole run are its bytes on LOWER: direct I/O reaches map in the
# submitter, so that is exact on both dm cores (for the raw device DEV is
# LOWER).  A caller must end its test when _cg_share fails
# (r=$(_cg_share ...) || { echo "$r"; exit 1; }): _fail only ends the
# command substitution.  FL_SHARE_LO and FL_SHARE_HI: one more fio
# argument for one of them (e.g. its own region, --offset=50%).
_cg_share() {
	local dev=$1 lower=$2 lo=$3 hi=$4 secs=$5 n plo phi b a w0 w1 x d end

	shift 5
	d=$(_devno "$lower")
	n=$(cat "$FL_TMP/share-n" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$FL_TMP/share-n"
	b="$(_cg_rbytes "$lo" "$hi" "$d") $(_cg_rbytes "$lo" "$hi" "$(_devno "$dev")")"
	_cg_fio "$lo" "share$n-lo" --filename="$dev" --direct=1 --time_based \
		--runtime=$((secs + $(_secs 600))) "$@" ${FL_SHARE_LO:+$FL_SHARE_LO} >&2 &
	plo=$!
	_cg_fio "$hi" "share$n-hi" --filename="$dev" --direct=1 --time_based \
		--runtime=$((secs + $(_secs 600))) "$@" ${FL_SHARE_HI:+$FL_SHARE_HI} >&2 &
	phi=$!
	end=$((${EPOCHREALTIME/./} + $(_secs 60) * 1000000))
	while :; do
		w0=$(_cg_rbytes "$lo" "$hi" "$d")
		awk -v b="$b" -v w="$w0" 'BEGIN { split(b, p); split(w, q)
			exit !(q[1] > p[1] && q[2] > p[2]) }' && break
		[ "${EPOCHREALTIME/./}" -lt "$end" ] ||
			_fail "$dev: fio in $lo and $hi not both reading after $(_secs 60) s"
		sleep 0.1
	done
	sleep 0.3
	w0=$(_cg_rbytes "$lo" "$hi" "$d")
	sleep "$secs"
	w1=$(_cg_rbytes "$lo" "$hi" "$d")
	if ! _alive "$plo" || ! _alive "$phi"; then
		_fail "$dev: a fio ended inside the window"
	fi
	_fio_stop "share$n-lo" "$lo"
	_fio_stop "share$n-hi" "$hi"
	_wait_pid $plo "$(_secs 60)" || _fail "fio in $lo failed"
	_wait_pid $phi "$(_secs 60)" || _fail "fio in $hi failed"
	a="$(_cg_rbytes "$lo" "$hi" "$d") $(_cg_rbytes "$lo" "$hi" "$(_devno "$dev")")"
	x=$(awk -v b="$b" -v a="$a" 'BEGIN { split(b, p); split(a, q)
		printf "%.0f %.0f %.0f %.0f", q[1] - p[1], q[2] - p[2], q[3] - p[3], q[4] - p[4] }')
	# shellcheck disable=SC2086
	set -- $x
	if [ "$1" != "$3" ] || [ "$2" != "$4" ]; then
		_fail "$dev: bytes of $lo/$hi below ($1/$2) are not theirs on the device read ($3/$4)"
	fi
	awk -v b="$w0" -v a="$w1" 'BEGIN { split(b, p); split(a, q)
		lo = q[1] - p[1]; hi = q[2] - p[2]
		printf "%s %.0f %.0f\n", (lo > 0 ? sprintf("%.2f", hi / lo) : "inf"), lo, hi }'
}

# _cg_escapes TGT LOWER HOOK: the three cases in which a bio reaches the dm
# device's map outside its submitter's context (blkcg-notes.md, "Which css
# each context sees"), each from a fresh cgroup, through a TGT device over
# the whole of LOWER:
#   throttled  4 direct 256 KiB reads held back by rbps=1 MiB/s on the dm
#              device (dispatched by blk-throttle's work item): each is
#              larger than what one 100 ms slice allows, so none passes
#              at once (dd's 4 KiB reads at riops=100 ran below the limit
#              under emulation, 58 of 64 reached map in dd itself, and
#              64 KiB reads at 1 MiB/s 6 of 16)
#   deferred   one 1 MiB direct write queued while the dm device is
#              suspended (dispatched by dm_wq_work on resume)
#   writeback  8 MiB buffered through ext4 on the dm device, then sync
#              (submitted by the flusher kworker)
# Around each case's I/O it runs "HOOK begin CASE CGROUP DEV LOWER" and
# "HOOK end CASE CGROUP DEV LOWER" (the controller's own evidence: end
# prints one word).
# Sets esc_throttled, esc_deferred and esc_writeback to "LOW DM HOOKOUT":
# the cgroup's bytes (rbytes for throttled, wbytes else) on LOWER and on the
# dm device, and what HOOK end printed.
_cg_escapes() {
	local tgt=$1 lower=$2 hook=$3 name=fl-esc-$1 dev cg mnt=$FL_TMP/esc-mnt pid out

	_dm_create "$name" "$(_table "$(_sectors "$lower")" "$lower" 0 "$tgt")"
	dev=$(_dm_dev "$name")

	cg=$(_cg_create "esc-thr-$tgt") || exit 1
	_cg_iomax "$cg" "$dev" "rbps=$((1 << 20))"
	"$hook" begin throttled "$cg" "$dev" "$lower"
	_cg_run "$cg" dd if="$dev" of=/dev/null bs=256k count=4 iflag=direct status=none ||
		_fail "$tgt: throttled reads failed"
	out=$("$hook" end throttled "$cg" "$dev" "$lower") || exit 1
	esc_throttled="$(_cg_stat "$cg" "$lower" rbytes) $(_cg_stat "$cg" "$dev" rbytes) $out"

	cg=$(_cg_create "esc-def-$tgt") || exit 1
	"$hook" begin deferred "$cg" "$dev" "$lower"
	dmsetup suspend "$name" || _fail "$tgt: suspend failed"
	# one 1 MiB bio: all of it is queued before dd waits
	_cg_run "$cg" dd if=/dev/zero of="$dev" bs=1M count=1 seek=1 oflag=direct status=none &
	pid=$!
	_cg_wait_stat "$cg" "$dev" wbytes $((1 << 20)) "$(_secs 30)" ||
		{ dmsetup resume "$name"; _fail "$tgt: the write did not reach the suspended device"; }
	[ "$(_cg_stat "$cg" "$lower" wbytes)" = 0 ] ||
		{ dmsetup resume "$name"; _fail "$tgt: a write went below a suspended device"; }
	dmsetup resume "$name" || _fail "$tgt: resume failed"
	_wait_pid $pid "$(_secs 30)" || _fail "$tgt: the deferred write failed"
	out=$("$hook" end deferred "$cg" "$dev" "$lower") || exit 1
	esc_deferred="$(_cg_stat "$cg" "$lower" wbytes) $(_cg_stat "$cg" "$dev" wbytes) $out"

	mkdir -p "$mnt"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" ||
		_fail "$tgt: mkfs.ext4 failed"
	mount -t ext4 "$dev" "$mnt" || _fail "$tgt: mount failed"
	sync
	cg=$(_cg_create "esc-wb-$tgt") || exit 1
	"$hook" begin writeback "$cg" "$dev" "$lower"
	_cg_run "$cg" dd if=/dev/zero of="$mnt/f" bs=1M count=8 status=none ||
		_fail "$tgt: buffered write failed"
	sync
	out=$("$hook" end writeback "$cg" "$dev" "$lower") || exit 1
	esc_writeback="$(_cg_stat "$cg" "$lower" wbytes) $(_cg_stat "$cg" "$dev" wbytes) $out"
	umount "$mnt" || _fail "$tgt: umount failed"
	_dm_remove "$name"
	_log "$tgt escapes, cgroup's bytes lower, dm, controller's figure:" \
		"throttled $esc_throttled; deferred $esc_deferred; writeback $esc_writeback"
}

# _esc_whom CASE LOW: whom the lower device charged for a case of
# _cg_escapes, from the cgroup's bytes there: "cgroup" (all of them:
# exact for throttled and deferred, within 10% for writeback, where ext4's
# own metadata may ride along), "root" (none of them; for throttled at
# most a quarter: the reads that fit blk-throttle's budget reach map in
# the submitter), else "split:LOW".
_esc_whom() {
	local want

	case $1 in
	throttled) want=$((1 << 20)) ;;
	deferred) want=$((1 << 20)) ;;
	writeback) want=$((8 << 20)) ;;
	esac
	awk -v c="$1" -v l="$2" -v w="$want" 'BEGIN {
		if (l == w || (c == "writeback" && l >= 0.9 * w && l <= 1.1 * w)) print "cgroup"
		else if (l == 0 || (c == "throttled" && l <= w / 4)) print "root"
		else print "split:" l }'
}

