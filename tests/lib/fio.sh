# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# fio runs for the tests: in the test's shell or inside a cgroup, stopped
# on purpose, and their figures; sourced by common.sh.

# _fio NAME ARGS...: run fio (in FL_TMP: the guest's source tree is
# read-only), fail the test on any error.  Output in $FL_TMP/fio-NAME.out.
_fio() {
	local name=$1 out=$FL_TMP/fio-$1.out
	shift
	# exit 128 is fio's after SIGINT: a failure unless _fio_stop sent it
	(cd "$FL_TMP" && fio --name="$name" --verify_state_save=0 "$@") >"$out" 2>&1 ||
		{ [ $? = 128 ] && [ -e "$FL_TMP/fio-$name.stopped" ]; } ||
		{ cat "$out"; _fail "fio $name failed"; }
	_fio_rates "$out" || { cat "$out"; _fail "fio $name reported errors"; }
	_log "ok: fio $name: $FIO_RATES"
}

# _fio_rates OUT: FIO_RATES, the "read: IOPS=..." and "write: IOPS=..."
# lines of fio's output OUT on one line; fails unless OUT has "err= 0:".
# In the shell: an exec costs ~0.2 s under TCG, and the tests run
# hundreds of fio.
_fio_rates() {
	local line ok=1
	local -a rate_w

	FIO_RATES=
	while IFS= read -r line; do
		[[ $line == *"err= 0:"* ]] && ok=0
		if [[ $line =~ ^\ +(read|write):\ IOPS ]]; then
			read -ra rate_w <<<"$line"
			FIO_RATES+=" ${rate_w[*]} "
		fi
	done <"$1"
	return $ok
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

# _fio_msec NAME JOB: the run time in ms fio reported for JOB (its first
# data direction) in the output _fio or _cg_fio kept for NAME.
_fio_msec() {
	awk -v j="$2" 'index($0, j ": (groupid=") == 1 { f = 1; next }
		f && match($0, /\/[0-9]+msec\)/) { print substr($0, RSTART + 1, RLENGTH - 6); exit }' \
		"$FL_TMP/fio-$1.out"
}
