# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# apt_codename: VERSION_CODENAME of /etc/os-release (this machine's
# release, whose repositories the functions below read); fails with a
# message when there is none.
apt_codename() {
	local c
	c=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ -n "$c" ] || { echo "apt_codename: no VERSION_CODENAME in /etc/os-release" >&2; return 1; }
	echo "$c"
}

# apt_mirror: the Debian mirror this machine's apt already uses, for the
# private apt states and the sid chroot of scripts/setup.sh and
# scripts/setup-kernels.sh (no mirror host is written into the scripts).
# Asks apt itself (apt-get indextargets: what apt-get update fetches, read
# from every sources file apt reads): the first repository with main of
# the release's own codename (VERSION_CODENAME of /etc/os-release, not
# -security or -updates), one whose Release file says "Origin: Debian"
# first (a vendor's repository may name the codename too; the Origin is
# known once apt-get update has run).  Prints its URI, no trailing slash;
# fails with a message when there is none.
apt_mirror() {
	local codename origin u=''

	codename=$(apt_codename) || return 1
	for origin in "Origin: Debian" ""; do
		# shellcheck disable=SC2016 # $(REPO_URI) is apt's field, not ours
		u=$(apt-get indextargets --format '$(REPO_URI)' "Identifier: Packages" \
			"Release: $codename" "Component: main" ${origin:+"$origin"} | sed -n 1p)
		[ -z "$u" ] || break
	done
	[ -n "$u" ] || { echo "apt_mirror: apt has no source for $codename main" >&2; return 1; }
	echo "${u%/}"
}

# apt_sources: the machine's own Debian repositories of its release, the
# release itself, -updates and -security (a kernel's headers may be only
# in -security), one "deb URI SUITE main" line each, for a chroot of the
# same release that must find what the machine finds (tests/check-deb).
# Read from apt as apt_mirror does; fails with a message when there are none.
apt_sources() {
	local codename out

	codename=$(apt_codename) || return 1
	# shellcheck disable=SC2016 # $(REPO_URI), $(RELEASE): apt's fields
	out=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' "Identifier: Packages" \
		"Component: main" "Origin: Debian" |
		awk -v c="$codename" '$2 == c || $2 == c "-updates" || $2 == c "-security" {
			sub(/\/$/, "", $1); print "deb " $1 " " $2 " main" }' | sort -u)
	[ -n "$out" ] || { echo "apt_sources: apt has no Debian source for $codename main" >&2; return 1; }
	printf '%s\n' "$out"
}
