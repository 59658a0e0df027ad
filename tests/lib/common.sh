#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Shared setup and teardown for the dm-fastlinear tests.  tests/run
# sources this library and the test in a subshell, then calls the test's
# requires (if it has one: what the test needs, _skip or a _have_* helper
# where it is missing), test_run, and _cleanup.  Helpers that fail call
# _fail, which ends the test.
#
# Here: the core (module loading, messages and assertions, dm devices,
# data, background jobs and time, _cleanup).  By subject, sourced below
# for every test and for bench/, which sources this file too:
#   nullb.sh   null_blk devices, and the lower devices a test takes
#   fio.sh     fio runs, in the test's shell or in a cgroup
#   cgroup.sh  cgroup v2: cgroups, io.stat, io.max, iocost's settings
#   kprobe.sh  kprobe hit counts
# A group's own helpers are in its file, which its tests source
# themselves: tests/lib/lvm.sh (lvm/), tests/lib/blkcg.sh (the blkcg
# controller tests: shares and escapes).

# the target a test's tables map through (tests/run: TEST@TARGET)
FL_TARGET=${FL_TARGET:-fastlinear}

# shellcheck source=tests/lib/nullb.sh
. "${BASH_SOURCE[0]%/*}/nullb.sh"
# shellcheck source=tests/lib/fio.sh
. "${BASH_SOURCE[0]%/*}/fio.sh"
# shellcheck source=tests/lib/cgroup.sh
. "${BASH_SOURCE[0]%/*}/cgroup.sh"
# shellcheck source=tests/lib/kprobe.sh
. "${BASH_SOURCE[0]%/*}/kprobe.sh"

# _load_dm_mod [keep]: the dm core under test: FL_DM_MOD (a rebuilt
# dm-mod.ko, rig/vm --dm-core) when set, which must go in before anything
# loads the kernel's own (an error if dm-mod is loaded, unless "keep"),
# else the kernel's (modprobe dm-mod) where it is not loaded yet
_load_dm_mod() {
	if [ -e /sys/module/dm_mod ]; then
		if [ -n "${FL_DM_MOD:-}" ] && [ -z "${1:-}" ]; then
			echo "dm-mod already loaded, cannot insmod $FL_DM_MOD"
			return 1
		fi
	elif [ -n "${FL_DM_MOD:-}" ]; then
		insmod "$FL_DM_MOD"
	else
		modprobe dm-mod
	fi
}

# _load_modules [keep]: dm-mod (_load_dm_mod), configfs, null_blk
# without devices, brd (when FL_BRD_MB is set), tracefs, ext4 and the
# target, each only where it is not there yet (each modprobe or mount is a
# second or more under TCG).  The suite and the benchmarks replace a
# loaded dm-fastlinear by FL_MODULE (with FL_MODPARAMS).  With "keep"
# (bench/cgroup-exp, bench/demo-run, which leave a host's modules as they
# are) a loaded dm-fastlinear stays, and without a readable FL_MODULE the
# installed one is loaded.
_load_modules() {
	local keep=${1:-}

	_load_dm_mod "$keep" || return 1
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
	local d

	if [[ "$1 $2 $3" =~ ^[0-9]{1,15}\ [0-9]{1,15}\ [0-9]{1,3}$ ]]; then
		d=$(($1 - $2))
		[ $((${d#-} * 100)) -le $(($2 * $3)) ]
	else
		awk -v a="$1" -v e="$2" -v p="$3" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= e * p / 100) }'
	fi || _fail "$4: got $1, expected $2 +-$3%"
	_log "ok: $4 = $1 (expected $2 +-$3%)"
}

# _num VALUE WHAT: fail unless VALUE is a number (awk compares anything
# else as a string: "FAIL: ..." >= 4 holds)
_num() {
	[[ $1 =~ ^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || _fail "$2: got '$1', not a number"
}

# _at_least ACTUAL MIN WHAT / _at_most ACTUAL MAX WHAT (numbers, decimals too)
_at_least() {
	_num "$1" "$3"
	_cmp "$1" -ge "$2" 'BEGIN { exit !(a >= b) }' ||
		_fail "$3: got $1, expected at least $2"
	_log "ok: $3 = $1 (>= $2)"
}

_at_most() {
	_num "$1" "$3"
	_cmp "$1" -le "$2" 'BEGIN { exit !(a <= b) }' ||
		_fail "$3: got $1, expected at most $2"
	_log "ok: $3 = $1 (<= $2)"
}

# _cmp A OP B AWK: A OP B ([ ]'s -ge, -le) for integers, in the shell;
# else AWK with a and b (decimals)
_cmp() {
	if [[ $1 =~ ^-?[0-9]{1,17}$ && $3 =~ ^-?[0-9]{1,17}$ ]]; then
		case $2 in
		-ge) [ "$1" -ge "$3" ] ;;
		-le) [ "$1" -le "$3" ] ;;
		esac
	else
		awk -v a="$1" -v b="$3" "$4"
	fi
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

_have_program() {
	command -v "$1" >/dev/null || _skip "$1 not installed"
}

# _have_module NAME: skip the test unless modprobe loads NAME
_have_module() {
	modprobe "$1" || _skip "no $1"
}

# _targets_with TARGET...: FL_TARGET and the TARGETs, each once, sorted,
# one a line: the targets a test runs the same check through
_targets_with() {
	printf '%s\n' "$FL_TARGET" "$@" | sort -u
}

# _table LEN DEV OFFSET [TARGET]: a one-line table of LEN sectors at OFFSET
# on DEV through TARGET, by default the target under test, FL_TARGET
# (tests/run): fastlinear, linear, or striped: one stripe (stripe_map()'s
# path) of 128 KiB chunks, so that the tests' aligned I/Os of up to 128 KiB
# are not split and the I/O counts of both devices compare; switch: one
# path in 128 KiB regions, and unstriped (dm-unstripe): stripe 0 of one
# in 128 KiB chunks
# (their map methods, which upstream/'s series converts, for the same
# I/Os; LEN a multiple of 256); or crypt-null: dm-crypt with the null
# cipher (no key: "-", IV offset 0), dm-crypt's cloning and workqueues
# without the cost of a cipher.  _dm_create loads the in-tree targets'
# modules (_dm_target_load).
_table() {
	case ${4:-$FL_TARGET} in
	striped) echo "0 $1 striped 1 256 $2 $3" ;;
	switch) echo "0 $1 switch 1 256 0 $2 $3" ;;
	unstriped) echo "0 $1 unstriped 1 256 0 $2 $3" ;;
	crypt-null) echo "0 $1 crypt cipher_null-ecb - 0 $2 $3" ;;
	*) echo "0 $1 ${4:-$FL_TARGET} $2 $3" ;;
	esac
}

# _table_halves LEN DEV OFFSET: the mapping of "_table LEN DEV OFFSET
# linear" as two dm-linear lines of LEN/2 sectors each (LEN even): two
# targets, so dm core's clone path on every core, where a one-line
# dm-linear table may be remapped in place (_dm_linear_in_place)
_table_halves() {
	local h=$(($1 / 2))

	printf '0 %s linear %s %s\n%s %s linear %s %s\n' "$h" "$2" "$3" "$h" "$h" "$2" $(($3 + h))
}

# _dm_linear_in_place: whether the dm core under test remaps a dm-linear
# bio in place, with no clone (the diet patch "dm: remap a bio of a
# one-target dm-linear table in place", 7.2's 05 and 6.12's 03, on the
# patched core with FL_DIET: the build's file "diet", beside its dm-mod,
# names the patches applied): the original bio is associated again at
# the lower device (bio_associate_blkg()) where a clone would be
# associated from it (bio_clone_blkg_association()).
_dm_linear_in_place() {
	[ "${FL_DM_CORE:-stock}" = patched ] && [ -n "${FL_DIET:-}" ] &&
		grep -q -- '-dm-remap-a-bio-of-a-one-target-dm-linear-table-in-place\.patch$' \
			"$(dirname "${FL_DM_MOD:-/nonexistent/dm-mod.ko}")/diet" 2>/dev/null
}

# _dm_remap_io_cache: whether the dm core under test keeps the records of
# its in-place remaps in a per-cpu cache (the diet patch "dm: keep the
# records of in-place remaps in a per-cpu cache", 7.2's 06 and 6.12's 04:
# the slab cache dm_remap_io, a cpu hotplug teardown, a drain at unload)
_dm_remap_io_cache() {
	_dm_linear_in_place &&
		grep -q -- '-dm-keep-the-records-of-in-place-remaps-in-a-per-cpu-cache\.patch$' \
			"$(dirname "$FL_DM_MOD")/diet" 2>/dev/null
}

# _dm_target_load NAME: load the module of an in-tree dm target (dm-crypt)
# for the dm core under test.  On the patched core (FL_DM_CORE=patched)
# that is NAME.ko built beside FL_DM_MOD (the patched build puts the
# targets the series touches there): the kernel's own, built against the
# stock core and without the series, would measure the wrong thing, so
# it must not be the one loaded.  It must differ from the kernel's own:
# by srcversion where both have one (Debian's 6.1 modules have none,
# without MODULE_VERSION or CONFIG_MODULE_SRCVERSION_ALL), else by being
# an out-of-tree build (modinfo without "intree", the kernel's taint O
# once loaded).  Fails the test if not.  Elsewhere: modprobe NAME, its
# status returned (a test's requires skips on it).
_dm_target_load() {
	local name=$1 mod=${1//-/_} ko own want dep

	if [ "${FL_DM_CORE:-stock}" != patched ]; then
		[ -e "/sys/module/$mod" ] || modprobe "$name"
		return
	fi
	ko=$(dirname "${FL_DM_MOD:?FL_DM_MOD unset on the patched core}")/$name.ko
	[ -r "$ko" ] || _fail "no $ko: the patched core's build has no $name"
	want=$(modinfo -F srcversion "$ko")
	own=$(modinfo -F srcversion "$name" 2>/dev/null)
	if [ -n "$want" ] && [ -n "$own" ]; then
		[ "$want" != "$own" ] ||
			_fail "$ko: srcversion $want, the kernel's own $name's"
	else
		[ -z "$(modinfo -F intree "$ko")" ] ||
			_fail "$ko: an in-tree build (no srcversion to tell it from the kernel's own)"
	fi
	if [ ! -e "/sys/module/$mod" ]; then
		# insmod resolves no dependency: those the build recorded (the
		# md5 library of a kernel that builds it as a module), dm-mod
		# being the patched core's, already loaded
		for dep in $(modinfo -F depends "$ko" | tr , ' '); do
			[ -e "/sys/module/${dep//-/_}" ] || modprobe "$dep" ||
				_fail "$ko: cannot load its dependency $dep"
		done
		insmod "$ko" || _fail "insmod $ko failed"
	fi
	# loaded before (by an earlier test, or autoloaded): it must be ours
	if [ -n "$want" ]; then
		[ "$(cat "/sys/module/$mod/srcversion" 2>/dev/null)" = "$want" ] ||
			_fail "$mod loaded is not $ko (srcversion)"
	else
		[[ $(cat "/sys/module/$mod/taint") == *O* ]] ||
			_fail "$mod loaded is the kernel's own, not $ko (no taint O)"
	fi
	_log "$name: $ko (${want:+srcversion $want, }not the kernel's own: beside FL_DM_MOD)"
}

# _dm_create NAME TABLE: create a dm device, remembered for cleanup; the
# module of an in-tree target that upstream/'s series patches is loaded
# first, the patched core's own (_dm_target_load), before dmsetup could
# autoload the kernel's.  Its messages go to stderr: callers capture
# the output of functions that create devices (dev=$(_map ...)).
_dm_create() {
	local -a w

	read -ra w <<<"$2"
	case ${w[2]} in
	crypt | switch) _dm_target_load "dm-${w[2]}" >&2 || _fail "cannot load dm-${w[2]}" ;;
	unstriped) _dm_target_load dm-unstripe >&2 || _fail "cannot load dm-unstripe" ;;
	esac
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

# _dm_remove NAME: remove a dm device.  With udev running, dmsetup waits
# until udev has handled the removal's event (its cookie): bounded here,
# so that a udev that stopped handling events fails the test in minutes,
# with where udev is, instead of at the test's timeout with dmsetup asleep.
_dm_remove() {
	local pid secs end rc=0

	secs=$(_secs 120)
	end=$((SECONDS + secs))
	dmsetup remove --retry "$1" &
	pid=$!
	# by the clock: under TCG on a loaded host a sleep's fork is slow
	while _alive "$pid" && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.2
	done
	if _alive "$pid"; then
		_log "dmsetup remove $1: udev has not handled its event in ${secs}s"
		_udev_dump
		# release the cookie, or dmsetup never returns
		dmsetup udevcomplete_all -y >&2
		wait "$pid"
		_fail "dmsetup remove $1: udev handled no event for ${secs}s"
	fi
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || _fail "dmsetup remove $1 failed"
	sed -i "/^$1\$/d" "$FL_TMP/dms"
}

# _udev_dump: into the log, whether udevd answers, its workers and where
# they sleep, the cookies waited on, and every task in D state
_udev_dump() {
	local p

	_log "udevadm control --ping: $(timeout 10 udevadm control --ping 2>&1 && echo ok)"
	_log "udev queue: $([ -e /run/udev/queue ] && echo 'events pending' || echo empty)"
	dmsetup udevcookies >&2
	ps -eo pid,ppid,stat,wchan:32,etime,args | awk 'NR == 1 || /udev|blkid|dmsetup/ || $3 ~ /^D/' >&2
	for p in $(ps -eo pid=,stat= | awk '$2 ~ /^D/ { print $1 }') $(pgrep -x systemd-udevd); do
		_log "stack of $p ($(cat "/proc/$p/comm" 2>/dev/null)):"
		cat "/proc/$p/stack" 2>/dev/null >&2
	done
}

_sectors() {
	blockdev --getsz "$1"
}

# _devno DEV: MAJ:MIN of a block device, as io.max and io.stat key it.
_devno() {
	local d=${1##*/} n

	# without a fork for a device node (_dm_dev's /dev/dm-N, a lower's
	# /dev/nullbN): each exec costs ~0.2 s under TCG, and the blkcg
	# tests read io.stat entries by device hundreds of times
	[ -L "$1" ] && d=$(basename "$(readlink -f "$1")")
	read -r n <"/sys/class/block/$d/dev" || return 1
	echo "$n"
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

# _alive PID: the process exists and is not a zombie.
_alive() {
	local st

	# builtins: it is polled, and under TCG each fork counts
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ]
}

# _wait_pid PID SECS: wait at most SECS seconds for the background job PID
# (a child of the test's shell) and return its exit status.  A job still
# running then fails the test, with its kernel stack in the log, and
# what the test's _hang_dump, if it defines one, prints (the state of
# the devices it was waiting on).
_wait_pid() {
	local pid=$1 secs=$2 i c task
	local -a todo kids

	for ((i = 0; i < secs * 10; i++)); do
		_alive "$pid" || break
		sleep 0.1
	done
	if _alive "$pid"; then
		_log "process $pid ($(cat "/proc/$pid/comm")) still running after ${secs}s:"
		cat "/proc/$pid/stack" 2>/dev/null
		# every descendant, every thread: the one stuck is often the
		# last (fio's job process, two shells below)
		read -rd '' -a todo < <(cat /proc/"$pid"/task/*/children 2>/dev/null)
		for ((i = 0; i < ${#todo[@]}; i++)); do
			c=${todo[i]}
			_log "descendant $c ($(cat "/proc/$c/comm" 2>/dev/null)):"
			for task in /proc/"$c"/task/*; do
				[ "${task##*/}" = "$c" ] || _log "thread ${task##*/}:"
				cat "$task/stack" 2>/dev/null
			done
			read -rd '' -a kids < <(cat /proc/"$c"/task/*/children 2>/dev/null)
			todo+=("${kids[@]}")
		done
		declare -F _hang_dump >/dev/null && _hang_dump
		_fail "process $pid did not finish within ${secs}s (hang?)"
	fi
	wait "$pid"
}

# _now / _since START: wall-clock seconds, and seconds since _now gave START.
_now() {
	date +%s.%N
}

_since() {
	awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }'
}

# FL_DMESG_BAD: what the kernel log must not hold (tests/run's scan after
# each test and at the end, and the guests of upstream/diet/peers/)
FL_DMESG_BAD='WARNING:|BUG:|Oops|KASAN|possible circular locking|hung_task|kmemleak|UBSAN|general protection'

# _dmesg_since MARKER: the kernel log from the line holding MARKER on
_dmesg_since() {
	dmesg | awk -v m="$1" 'index($0, m) { on = 1 } on'
}

# _dmesg_scan WHO MARKER DIR: the kernel log since MARKER in DIR/dmesg,
# its lines that match FL_DMESG_BAD in DIR/dmesg.bad; says which (WHO:
# dmesg-scan passed or failed, and the first 20 hits); status 1 on a hit
_dmesg_scan() {
	_dmesg_since "$2" >"$3/dmesg"
	if grep -E "$FL_DMESG_BAD" "$3/dmesg" >"$3/dmesg.bad"; then
		echo "$1: dmesg-scan failed:"
		head -20 "$3/dmesg.bad"
		return 1
	fi
	echo "$1: dmesg-scan passed"
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
	_nullb_cleanup
	rm -f "$FL_TMP/dms" "$FL_TMP/nullbs" "$FL_TMP/brds"
}
