# SPDX-License-Identifier: GPL-2.0-only
# For the scripts that gather guest runs (tests/check, check-kernels,
# check-install): the totals of "N passed, N failed" result lines.

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
