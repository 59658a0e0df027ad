# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# For the tests that send a bio no ioctl sends, through the suite's own
# module (tests/lib/fl-test-bio.c; make kmod builds it beside the target,
# rig/vm copies it into the run as test/fl-test-bio.ko beside
# $FL_MODULE).  A test sources it (after common.sh), calls _tb_requires
# from its requires() and _tb_load from test_run(); the module is
# unloaded by the test's cleanup (_group_cleanup).

FL_TB=

# _tb_requires: skip unless the test module is there
_tb_requires() {
	FL_TB=$(dirname "$FL_MODULE")/test/fl-test-bio.ko
	[ -r "$FL_TB" ] || _skip "no $FL_TB (make kmod builds it)"
}

# _tb_load: insmod the test module
_tb_load() {
	insmod "$FL_TB" || _fail "cannot load $FL_TB"
}

_group_cleanup() {
	rmmod fl_test_bio 2>/dev/null
	return 0
}

# _tb DEV OP SECTOR SECTORS: send DEV that bio and wait for it; prints
# its status (a negative errno, 0 for success)
_tb() {
	echo "$(_devno "$1") $2 $3 $4" >/sys/module/fl_test_bio/parameters/submit ||
		_fail "fl_test_bio: cannot send $2 at $3 to $1"
	cat /sys/module/fl_test_bio/parameters/status
}

# _tb_after: the last bio as its submitter finds it once completed: "dev
# MAJ:MIN sector S size N opf 0x.. sent 0x.. qos THROTTLED MERGED"
_tb_after() {
	cat /sys/module/fl_test_bio/parameters/after
}
