#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# btsdumpd's journal entries, read back from a real systemd-journald started
# in a private mount namespace (its own /run/systemd and /run/log): one
# crash stored (MESSAGE with the last branches, BTSDUMPD_* fields,
# MESSAGE_ID, PRIORITY=2), one over the rate limit (BTSDUMPD_RATELIMITED).
# Usage: test-journal.sh BTSDUMPD.  Exit 77 (skip) without root or unshare.
set -u
daemon=$(realpath "$1")
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/tests/helpers/journald-ns.sh"
journald_ns_usable || { echo "skip: needs root, unshare and systemd-journald"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '[Store]\nRateLimitIntervalSec=600\nRateLimitBurst=1\n' > "$tmp/conf"
cat > "$tmp/run.sh" <<EOS
for ts in 1700000000 1700000001; do
	"$daemon" --store "$tmp/store" --config "$tmp/conf" --direct \
		4242 1000 1000 11 \$ts crasher < "$src/tests/fixtures/crasher-null.core"
done
journalctl --sync -q 2>/dev/null || sleep 1
journalctl -D /run/log/journal -o json --no-pager SYSLOG_IDENTIFIER=btsdumpd > "$tmp/journal.json"
EOS
journald_ns_run "$tmp/run.sh" || { echo "journald run failed"; exit 1; }
SRC=$src exec python3 - "$tmp/journal.json" <<'EOP'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "helpers"))
from tap import Tap
import json
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
crash = [e for e in entries if e.get("MESSAGE_ID") == "6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a"]
check = (t := Tap()).check
stored = [e for e in crash if "BTSDUMPD_RATELIMITED" not in e]
limited = [e for e in crash if "BTSDUMPD_RATELIMITED" in e]
check(len(stored) == 1 and len(limited) == 1, "one stored and one rate-limited entry in the journal")
s = stored[0] if stored else {}
check(s.get("PRIORITY") == "2" and s.get("BTSDUMPD_PID") == "4242" and
      s.get("BTSDUMPD_SIGNAL_NAME") == "SIGSEGV" and s.get("BTSDUMPD_TRACE") == "present" and
      s.get("BTSDUMPD_CORE") == "stored", "stored crash: PRIORITY and BTSDUMPD_* fields")
check("Last branches of thread" in s.get("MESSAGE", "") and
      "0x000000000000" in s.get("BTSDUMPD_LAST_BRANCHES", "").splitlines()[-1],
      "MESSAGE and BTSDUMPD_LAST_BRANCHES carry the trail to the NULL call")
check(s.get("BTSDUMPD_FAULT", "").startswith("faulted at 0x0 = target of #") and
      s.get("MESSAGE", "").endswith(s.get("BTSDUMPD_FAULT", "?")),
      "BTSDUMPD_FAULT (and MESSAGE's last line) tie the fault to the trail")
check(s.get("BTSDUMPD_ENTRY", "").endswith("/1700000000.4242.crasher"), "BTSDUMPD_ENTRY names the entry")
l = limited[0] if limited else {}
check(l.get("BTSDUMPD_RATELIMITED") == "1" and l.get("PRIORITY") == "4",
      "rate-limited crash: BTSDUMPD_RATELIMITED=1, PRIORITY=4")
sys.exit(t.done())
EOP
