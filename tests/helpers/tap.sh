# SPDX-License-Identifier: GPL-2.0-or-later
# The shell tests' TAP writer, the same lines as tap.py writes: source it,
# then one call per check; tap_done prints the plan (1..N) at the end and
# returns 1 if a check failed.  A failure's details become `#` comments.
tap_n=0 tap_failed=0
tap_ok() {	# tap_ok WHAT
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1"
}
tap_fail() {	# tap_fail WHAT [DETAIL...]
	tap_n=$((tap_n + 1)) tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1"
	shift
	for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done
}
tap_status() {	# tap_status STATUS WHAT [DETAIL]: ok when STATUS is 0
	if [ "$1" = 0 ]; then tap_ok "$2"; else tap_fail "$2" "${3:-}"; fi
}
tap_check() {	# tap_check WHAT COMMAND...: ok when COMMAND succeeds
	tap_what=$1
	shift
	if tap_out=$("$@" 2>&1); then
		tap_ok "$tap_what"
	else
		tap_fail "$tap_what" "$(printf '%s\n' "$tap_out" | tail -n 20)"
	fi
}
tap_done() {	# the plan; status 1 if a check failed
	echo "1..$tap_n"
	[ "$tap_failed" = 0 ]
}
tap_skip_all() {	# tap_skip_all REASON: TAP's skip plan, exit 77
	echo "1..0 # SKIP $1"
	exit 77
}
