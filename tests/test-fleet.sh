#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The fleet: btsdumpd's journal entries shipped to a central host with
# systemd-journal-upload and systemd-journal-remote (HTTP on the loopback),
# read there with btsdumpctl -D / --file (docs/btsdumpd.md "Fleet").  A
# real systemd-journald in a private mount namespace takes two crashes
# (hosts web-1 and db-2, btsdumpd --direct); journal-upload sends its
# journal to journal-remote, which writes a journal file; on that file
# btsdumpctl lists both crashes with their hosts, shows the trail, and the
# trail fields arrived byte for byte; a third crash, the same bug as
# web-1's on db-2, groups with it (btsdumpctl -D list --group, journalctl
# BTSDUMPD_TRAIL=).  TAP.
# Usage: test-fleet.sh BTSDUMPD BTSDUMPCTL.  Exit 77 (skip) without root
# or unshare.
set -u
daemon=$(realpath "$1")
ctl=$(realpath "$2")
src=$(cd "$(dirname "$0")/.." && pwd)
remote=/lib/systemd/systemd-journal-remote
upload=/lib/systemd/systemd-journal-upload
. "$src/tests/helpers/journald-ns.sh"
journald_ns_usable || { echo "skip: needs root, unshare and systemd-journald"; exit 77; }
[ -x "$remote" ] && [ -x "$upload" ] || {
	echo "not ok 1 - systemd-journal-remote and -upload (apt-get install systemd-journal-remote)"
	echo "1..1"; exit 1; }
tmp=$(mktemp -d)
chmod 0755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
printf '[Store]\n' > "$tmp/conf"
port=$((20000 + $$ % 20000))
cat > "$tmp/run.sh" <<EOS
"$daemon" --store "$tmp/store" --config "$tmp/conf" --direct \
	4242 1000 1000 11 1700000000 crasher web-1 < "$src/tests/fixtures/crasher-null.core"
"$daemon" --store "$tmp/store" --config "$tmp/conf" --direct \
	4343 1000 1000 6 1700000100 crasher db-2 < "$src/tests/fixtures/crasher-abort.core"
"$daemon" --store "$tmp/store" --config "$tmp/conf" --direct \
	4444 1000 1000 11 1700000200 crasher db-2 < "$src/tests/fixtures/crasher-null.core"
journalctl --sync -q 2>/dev/null || sleep 1
journalctl -D /run/log/journal -o json --no-pager MESSAGE_ID=6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a > "$tmp/local.json"
mkdir -p "$tmp/central"
$remote --listen-http=127.0.0.1:$port --output="$tmp/central/all.journal" --split-mode=none &
r=\$!
sleep 1
$upload --url=http://127.0.0.1:$port -D /run/log/journal --follow=no
sleep 1
kill \$r; wait \$r || true
EOS
journald_ns_run "$tmp/run.sh" >"$tmp/run.log" 2>&1 || {
	echo "not ok 1 - journald, journal-upload and journal-remote ran"; sed 's/^/# /' "$tmp/run.log"
	echo "1..1"; exit 1; }
"$ctl" -D "$tmp/central" list > "$tmp/list.txt" 2>&1; echo "exit $?" >> "$tmp/list.txt"
"$ctl" --file "$tmp/central/all.journal" --json list > "$tmp/list.json" 2>"$tmp/list.err"
"$ctl" -D "$tmp/central" info 4242 > "$tmp/info.txt" 2>&1; echo "exit $?" >> "$tmp/info.txt"
"$ctl" -D "$tmp/central" show 4343 > "$tmp/show.txt" 2>&1; echo "exit $?" >> "$tmp/show.txt"
"$ctl" -D "$tmp/central" dump 4242 -o "$tmp/x" > "$tmp/dump.txt" 2>&1; echo "exit $?" >> "$tmp/dump.txt"
journalctl --file "$tmp/central/all.journal" -o json --no-pager MESSAGE_ID=6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a > "$tmp/central.json"
"$ctl" -D "$tmp/central" list --group > "$tmp/group.txt" 2>&1; echo "exit $?" >> "$tmp/group.txt"
"$ctl" -D "$tmp/central" --json list --group > "$tmp/group.json" 2>&1
trail=$("$ctl" -D "$tmp/central" -F TRAIL list 4242)
journalctl --file "$tmp/central/all.journal" -o json --no-pager "BTSDUMPD_TRAIL=$trail" \
	> "$tmp/bytrail.json"
SRC=$src exec python3 - "$tmp" <<'EOP'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "helpers"))
from tap import Tap
import json
tmp = sys.argv[1]
read = lambda n: open(os.path.join(tmp, n), errors="replace").read()
check = (t := Tap()).check
lst = read("list.txt")
rows = [l for l in lst.splitlines()[1:] if l.strip() and not l.startswith("exit")]
check("exit 0" in lst and len(rows) == 3 and "web-1" in rows[0] and "db-2" in rows[1] and
      "db-2" in rows[2] and "HOST" in lst.splitlines()[0],
      "btsdumpctl -D on the central journal lists both hosts' crashes", lst)
try:
    js = json.loads(read("list.json"))
except ValueError:
    js = []
check([(e.get("PID"), e.get("HOSTNAME"), e.get("path")) for e in js] ==
      [(4242, "web-1", None), (4343, "db-2", None), (4444, "db-2", None)],
      "btsdumpctl --file --json list: the same two, no local path", read("list.json") + read("list.err"))
info = read("info.txt")
check("exit 0" in info and "call*     0x55585717520c" in info and "web-1" in info and
      "-> 0x000000000000" in info and "faulted at 0x0" in read("list.json") and
      "web-1:" + tmp + "/store/" in info and "core.zst (remote)" in info and "(null)" not in info,
      "btsdumpctl -D info PID: the last branches, from the journal alone; the core on its host",
      info)
show = read("show.txt")
check("exit 0" in show and "Last branches of thread" in show and "SIGABRT" in show,
      "btsdumpctl -D show PID: the journal entry's message with the trail", show)
check("exit 1" in read("dump.txt") and "stays on the host" in read("dump.txt"),
      "dump from the journal: refused, the core stays on its host", read("dump.txt"))
local = {e["BTSDUMPD_PID"]: e for e in map(json.loads, read("local.json").splitlines())}
central = {e["BTSDUMPD_PID"]: e for e in map(json.loads, read("central.json").splitlines())}
keys = ("MESSAGE", "BTSDUMPD_LAST_BRANCHES", "BTSDUMPD_FAULT", "BTSDUMPD_HOSTNAME",
        "BTSDUMPD_TRAIL")
check(set(local) == set(central) == {"4242", "4343", "4444"} and
      all(local[p].get(k) == central[p].get(k) for p in local for k in keys),
      "the trail's fields (multi-line MESSAGE, LAST_BRANCHES, FAULT) arrived byte for byte",
      [(p, k) for p in local for k in keys if local[p].get(k) != central.get(p, {}).get(k)])
trail = {p: e.get("BTSDUMPD_TRAIL", "") for p, e in central.items()}
check(all(len(v) == 32 for v in trail.values()) and trail["4242"] == trail["4444"] != trail["4343"],
      "BTSDUMPD_TRAIL: the same for the same bug on two hosts, another for another", trail)
try:
    groups = json.loads(read("group.json"))
except ValueError:
    groups = []
check([(g.get("trail"), g.get("count"), g.get("hosts"), g.get("first"), g.get("last"),
        g.get("signal")) for g in groups] ==
      [(trail["4242"], 2, 2, 1700000000, 1700000200, "SIGSEGV"),
       (trail["4343"], 1, 1, 1700000100, 1700000100, "SIGABRT")],
      "btsdumpctl -D --json list --group: the NULL call twice on two hosts, the abort once",
      read("group.json"))
grp = [l.split()[:3] for l in read("group.txt").splitlines()[1:] if not l.startswith("exit")]
check("exit 0" in read("group.txt") and
      grp == [[trail["4242"][:12], "2", "2"], [trail["4343"][:12], "1", "1"]],
      "btsdumpctl -D list --group: the same in text", read("group.txt"))
found = sorted(json.loads(l)["BTSDUMPD_PID"] for l in read("bytrail.json").splitlines())
check(found == ["4242", "4444"], "journalctl BTSDUMPD_TRAIL=: every occurrence of the bug",
      read("bytrail.json")[:2000])
sys.exit(t.done())
EOP
