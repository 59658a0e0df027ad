# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# For the scripts that gather guest runs (tests/check, check-kernels,
# check-install): guests side by side, and the totals of their
# "N passed, N failed" result lines.

# shellcheck source=rig/guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../rig/guest.sh"

# _add_totals FILE: add FILE's last result line (also left in $line) to
# $passed and $failed; without one (the guest died) count one failure and
# return 1.
_add_totals() {
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	if [ -z "$line" ]; then
		echo "no result line in $1: counted as one failure"
		failed=$((failed + 1))
		return 1
	fi
	passed=$((passed + $(echo "$line" | awk '{ print $1 }')))
	failed=$((failed + $(echo "$line" | awk '{ print $3 }')))
}

# _jobs: how many guests to run at once: $FL_JOBS, else one per host CPU
# under TCG (one host thread runs a guest there), one per two under KVM
_jobs() {
	local n

	n=$(nproc)
	[ -n "$(_guest_accel)" ] || n=$((n / 2))
	echo "${FL_JOBS:-$((n > 1 ? n : 1))}"
}

# _deal_slots N S: of the "CORE TEST" lines on stdin, the ones slot S of
# N runs.  Longest first, each to the slot where it ends soonest, by the
# seconds in tests/durations (CORE:TEST's on a core other than stock,
# else TEST's, else 60) and a guest's boot and setup (60 s, as CI's
# guests took) where the slot has no test of that core yet, so that the
# slots end together; ties keep the list's order.
_deal_slots() {
	awk 'FNR == NR { if ($1 !~ /^#/) d[$1] = $2; next }
		{ k = ($1 != "stock" && (($1 ":" $2) in d)) ? $1 ":" $2 : $2
		  print ((k in d) ? d[k] : 60), FNR, $1, $2 }' \
		"$(dirname "${BASH_SOURCE[0]}")/../durations" - |
		sort -k1,1nr -k2,2n |
		awk -v n="$1" -v s="$2" -v boot=60 '{
			b = 0
			for (i = 1; i <= n; i++) {
				e = t[i] + $1 + ((i, $3) in has ? 0 : boot)
				if (!b || e < best) {
					b = i
					best = e
				}
			}
			t[b] = best
			has[b, $3] = 1
			if (b == s)
				print $3, $4
		}'
}

# _run_all FUNC LOG_PREFIX ITEM...: FUNC ITEM for each ITEM, its output in
# LOG_PREFIX-ITEM.txt; $(_jobs) at once.  One at a time, the output also
# goes to ours as it comes; side by side, each log is shown when all are
# done.
_run_all() {
	local func=$1 prefix=$2 item n
	shift 2

	n=$(_jobs)
	if [ "$n" = 1 ] || [ $# = 1 ]; then
		for item in "$@"; do
			"$func" "$item" 2>&1 | tee "$prefix-$item.txt"
		done
		return
	fi
	echo "$# runs, $n at once; their logs: $prefix-{$(echo "$@" | tr ' ' ,)}.txt"
	for item in "$@"; do
		while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do
			wait -n
		done
		# through a pipe: QEMU reopens its stdout by /proc/self/fd/1,
		# which on a file starts a second write offset at 0
		"$func" "$item" 2>&1 | cat >"$prefix-$item.txt" &
	done
	wait
	for item in "$@"; do
		echo "----- $item"
		cat "$prefix-$item.txt"
	done
}
