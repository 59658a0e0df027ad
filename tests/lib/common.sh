#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Shared setup and teardown for the dm-fastlinear tests.  A test file
# sources nothing itself: tests/run sources this library and the test in a
# subshell, calls test_run, then _cleanup.  Helpers that fail call _fail,
# which ends the test.

FL_NULLB_CFS=/sys/kernel/config/nullb

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
	local name=$1 size=$2 kv dir
	shift 2
	dir=$FL_NULLB_CFS/$name
	mkdir "$dir" || _fail "cannot create null_blk $name"
	echo "$name" >>"$FL_TMP/nullbs"
	echo "$size" >"$dir/size"
	echo 1 >"$dir/memory_backed"
	for kv in "$@"; do
		echo "${kv#*=}" >"$dir/${kv%%=*}" || _fail "null_blk $name: cannot set $kv"
	done
	echo 1 >"$dir/power" || _fail "cannot power on null_blk $name"
	udevadm settle 2>/dev/null
	[ -b "/dev/$name" ] || _fail "/dev/$name did not appear"
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

# _dm_create NAME TABLE: create a dm device, remembered for cleanup.
_dm_create() {
	echo "$1" >>"$FL_TMP/dms"
	dmsetup create "$1" --table "$2" || _fail "dmsetup create $1 '$2' failed"
}

# _dm_dev NAME: the device node of a dm device (udev may not run).
_dm_dev() {
	echo "/dev/$(dmsetup info -c --noheadings -o blkdevname "$1")"
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
	(cd "$FL_TMP" && fio --name="$name" --verify_state_save=0 "$@") >"$out" 2>&1 ||
		{ cat "$out"; _fail "fio $name failed"; }
	grep -q "err= 0:" "$out" || { cat "$out"; _fail "fio $name reported errors"; }
	_log "ok: fio $name: $(grep -E '^ +(read|write): IOPS' "$out" | tr -s ' ' | tr '\n' ' ')"
}

_cleanup() {
	local n

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
