# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# For the blkcg tests of the blk-cgroup controllers below a dm device
# (tests/blkcg/iocost, bfq, io-latency, io-prio, crypt): two cgroups'
# shares of one device, and the I/O that reaches the dm device's map
# outside its submitter's context; and the blkg associations per I/O
# (tests/blkcg/assoc-count, crypt).  A test sources it (after common.sh,
# which tests/run gives it).

# _assoc_per_io DEV RW N: blkg associations per I/O on DEV (at least 32
# MiB) over N 4 KiB direct I/Os of fio (io_uring, queue depth 8, RW:
# randread or randwrite): prints "FROM_CSS ASSOC CLONE" per I/O (rounded
# to 0.01), the hits line on stderr.  Every blkg association goes through
# bio_associate_blkg_from_css(); its two callers tell who asked:
# bio_associate_blkg() (bio_set_dev() and bio allocation with a bdev)
# and bio_clone_blkg_association() (dm core, on cores with upstream
# 2df8b310bcfe, and bio_alloc_clone() with a bdev).  Counted with kprobes,
# divided by the bios the submitter issued (submit_bio(): dm's clones
# enter the stack through submit_bio_noacct() only).  Prints "too few
# bios: HITS" when submit_bio() saw fewer than N.  fio submits exactly
# N: more means another process did I/O in the window (udev's blkid on a
# slow guest, started before the count stopped its queue: 34 bios of two
# clones each on the 7.2 debug kernel), and the count is taken again, up
# to three times in all.
_assoc_per_io() {
	local f try

	for try in 1 2 3; do
		# io_size: exactly N I/Os of 4 KiB, wrapping over the 32 MiB
		f=$(_kprobe_count "submit_bio bio_associate_blkg_from_css bio_associate_blkg bio_clone_blkg_association" \
			_fio "count-$2" --filename="$1" --ioengine=io_uring --direct=1 \
			--rw="$2" --bs=4k --size=32M --io_size=$(($3 * 4))k \
			--iodepth=8 --norandommap --randrepeat=0)
		echo "  hits: submit_bio from_css assoc clone = $f" >&2
		[ "${f%% *}" -gt "$3" ] 2>/dev/null || break
		echo "  $((${f%% *} - $3)) bios not fio's in the window (try $try)" >&2
	done
	echo "$f" | awk -v n="$3" '$1 < n { print "too few bios: " $1; exit }
		{ printf "%.2f %.2f %.2f\n", $2 / $1, $3 / $1, $4 / $1 }'
}

# _cg_rbytes CGLO CGHI DEVNO: the two cgroups' rbytes on DEVNO, "LO HI"
_cg_rbytes() {
	echo "$(_cg_stats "$1" "$3" rbytes) $(_cg_stats "$2" "$3" rbytes)"
}

# _cg_share DEV LOWER CGLO CGHI SECS FIO_ARGS...: CGLO and CGHI read DEV at
# once (one time-based fio each, FIO_ARGS for both).  Prints "RATIO LO HI
# US": the bytes each got on LOWER (io.stat's rbytes there) in a window of
# about SECS seconds while both read, HI over LO, and the window's length
# as measured (us: on a loaded host the reads of io.stat that bound it
# take their time, and a rate-limited cgroup's bytes grow with it).  The window opens 0.3 s after
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
	local dev=$1 lower=$2 lo=$3 hi=$4 secs=$5 n plo phi b a w0 w1 t0 t1 x d end

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
	t0=${EPOCHREALTIME/./}
	w0=$(_cg_rbytes "$lo" "$hi" "$d")
	sleep "$secs"
	w1=$(_cg_rbytes "$lo" "$hi" "$d")
	t1=${EPOCHREALTIME/./}
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
	awk -v b="$w0" -v a="$w1" -v us=$((t1 - t0)) 'BEGIN { split(b, p); split(a, q)
		lo = q[1] - p[1]; hi = q[2] - p[2]
		printf "%s %.0f %.0f %d\n", (lo > 0 ? sprintf("%.2f", hi / lo) : "inf"), lo, hi, us }'
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
# Sets esc[throttled], esc[deferred] and esc[writeback] to "LOW DM
# HOOKOUT": the cgroup's bytes (rbytes for throttled, wbytes else) on LOWER
# and on the dm device, and what HOOK end printed.  (esc: an associative
# array of the caller's, _cg_escape_checks'.)
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
	esc[throttled]="$(_cg_stat "$cg" "$lower" rbytes) $(_cg_stat "$cg" "$dev" rbytes) $out"

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
	esc[deferred]="$(_cg_stat "$cg" "$lower" wbytes) $(_cg_stat "$cg" "$dev" wbytes) $out"

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
	esc[writeback]="$(_cg_stat "$cg" "$lower" wbytes) $(_cg_stat "$cg" "$dev" wbytes) $out"
	umount "$mnt" || _fail "$tgt: umount failed"
	_dm_remove "$name"
	_log "$tgt escapes, cgroup's bytes lower, dm, controller's figure:" \
		"throttled ${esc[throttled]}; deferred ${esc[deferred]}; writeback ${esc[writeback]}"
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

# _esc_expect_whom TGT CASE WHOM WHAT [NOFIX_WHAT]: the dm core's answer
# for an escape case: the lower device charged the cgroup on the stock and
# patched cores ("TGT CASE: WHAT"), the root on the nofix core ("TGT CASE
# on the nofix core: NOFIX_WHAT", default WHAT)
_esc_expect_whom() {
	case $FL_DM_CORE in
	stock|patched) _expect_eq "$3" cgroup "$1 $2: $4" ;;
	nofix) _expect_eq "$3" root "$1 $2 on the nofix core: ${5:-$4}" ;;
	*) _fail "unknown dm core $FL_DM_CORE" ;;
	esac
}

# _cg_escape_checks LOWER HOOK CHECK [SAME]: _cg_escapes over LOWER with
# HOOK (the controller's evidence), through dm-linear and then through
# FL_TARGET; for each of its cases, in turn, "CHECK TGT CASE WHOM LOW DM
# HOOKOUT": the test's log line and assertions for the case (it calls
# _esc_expect_whom where it checks the dm core's answer), WHOM being
# _esc_whom's word for the cgroup's bytes LOW on LOWER, LOW DM HOOKOUT
# what _cg_escapes measured.  CHECK may set esc_same, what must be the
# same through both targets (default WHOM).  Last, per case, FL_TARGET's
# esc_same must be dm-linear's: "CASE: FL_TARGET SAME" (default SAME:
# "charges below as dm-linear does").
_cg_escape_checks() {
	local lower=$1 hook=$2 check=$3 same=${4:-charges below as dm-linear does}
	local tgt case whom esc_same
	local -A esc got

	for tgt in linear "$FL_TARGET"; do
		_cg_escapes "$tgt" "$lower" "$hook"
		for case in throttled deferred writeback; do
			# LOW DM HOOKOUT
			# shellcheck disable=SC2086
			set -- ${esc[$case]}
			whom=$(_esc_whom $case "$1")
			esc_same=$whom
			"$check" "$tgt" "$case" "$whom" "$@"
			got[$tgt.$case]=$esc_same
		done
	done
	for case in throttled deferred writeback; do
		_expect_eq "${got[$FL_TARGET.$case]}" "${got[linear.$case]}" \
			"$case: $FL_TARGET $same"
	done
}
