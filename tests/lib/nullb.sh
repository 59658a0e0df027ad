# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# null_blk devices through configfs, and the lower devices the tests map
# (null_blk and brd); sourced by common.sh.

FL_NULLB_CFS=/sys/kernel/config/nullb

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

# _nullb_cleanup: power off and remove the test's null_blk devices
# (_cleanup, after the dm devices above them)
_nullb_cleanup() {
	local n

	[ -s "$FL_TMP/nullbs" ] || return 0
	while read -r n; do
		echo 0 >"$FL_NULLB_CFS/$n/power" 2>/dev/null
		rmdir "$FL_NULLB_CFS/$n"
	done <"$FL_TMP/nullbs"
}
