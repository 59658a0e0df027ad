# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# kprobe hit counts for the tests; sourced by common.sh.  _cleanup
# (common.sh) calls _kprobe_cleanup.

FL_TRACING=/sys/kernel/tracing

# _have_kprobes: skip the test unless kprobe events can be made
_have_kprobes() {
	[ -e "$FL_TRACING/kprobe_events" ] || _skip "no kprobe events"
}

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
	local name hits rest

	while read -r name hits rest; do
		if [ "$name" = "$1" ] || [ "$name" = "flprobe/$1" ]; then
			echo "$hits"
		fi
	done <"$FL_TRACING/kprobe_profile"
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
	_udev_start_queue
	udevadm settle 2>/dev/null
	[ "$rc" = 0 ] && echo "$hits"
	return "$rc"
}

# _udev_start_queue: udev executes events again.  Checked: a request that
# udevd did not answer in time (udevadm control's timeout, on a loaded
# host) would leave it stopped, and every later dmsetup waiting on it.
_udev_start_queue() {
	local i

	pgrep -x systemd-udevd >/dev/null || return 0
	for i in 1 2 3; do
		udevadm control --start-exec-queue && return 0
		_log "udevadm control --start-exec-queue failed (try $i)" >&2
	done
	_fail "udev's event queue stays stopped" >&2
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
