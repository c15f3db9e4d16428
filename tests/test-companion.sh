#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# btsdumpd --companion (daemon/companion.c) against a real systemd-journald
# started in a private mount namespace, with a private
# /var/lib/systemd/coredump: systemd-coredump's entries are sent as
# systemd-coredump sends them (native protocol, from a root process named
# systemd-coredum), naming the fixture core stored zstd-, xz- and
# lz4-compressed and plain (one sender gone before journald read its
# /proc entry: journald is stopped while it sends and exits, so the core
# vouches for the entry); the companion's journal entries carry the trail
# (symbols read as the crashing uid), btsdumpd's MESSAGE_ID and the
# coredump entry's COREDUMP_PID/COREDUMP_TIMESTAMP; a forged entry (another
# process's) is ignored; a second run resumes at its cursor (no repeats);
# btsdumpctl shows an entry by the coredump's PID; stored cores that do not
# decompress whole (zstd and lz4 cut short, xz with a corrupt block) still
# make an entry, which says the core is cut and why, and the companion goes
# on; root's and a system user's programs in 0700 directories are read as
# those users (COREDUMP_EXE, COREDUMP_PROC_MAPS), never beyond what that
# user may read.  With the LBR collector (a snapshot file), the note goes
# into the companion's entry and, for gdb on systemd-coredump's core (as
# `coredumpctl debug` runs it), gdb/bts.py finds that entry by the core's
# SHA-256 and shows the note; a core differing by one byte gets none.  TAP.
# Usage: test-companion.sh BTSDUMPD BTSDUMPCTL BTSDUMP.  Exit 77 (skip)
# without root or unshare.
set -u
daemon=$(realpath "$1")
ctl=$(realpath "$2")
btsdump=$(realpath "$3")
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/tests/helpers/journald-ns.sh"
journald_ns_usable || { echo "skip: needs root, unshare and systemd-journald"; exit 77; }
for t in zstd xz lz4; do
	command -v $t >/dev/null || { echo "not ok 1 - $t is installed (apt-get install $t)"; echo "1..1"; exit 1; }
done
tmp=$(mktemp -d)
chmod 0755 "$tmp"
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
printf '[Store]\n' > "$tmp/conf"
for u in 0 999; do
	mkdir -m 0700 "$tmp/u$u"
	cp "$src/tests/fixtures/crasher" "$tmp/u$u/crasher"
	chown -R $u:$u "$tmp/u$u"
done
core=$src/tests/fixtures/crasher-null.core
notrace=$src/tests/fixtures/crasher-notrace.core
cat > "$tmp/send.py" <<'EOP'
# systemd-coredump's journal entries, sent over the native protocol from a
# process journald names systemd-coredum (root): COREDUMP_* fields, the
# core's name made of COREDUMP_UID, _PID and _TIMESTAMP as systemd-coredump
# makes it.  Modes: trusted (named so, stays until journald read it), quick
# (named so, exits at once; run.sh stops journald meanwhile, so it finds no
# /proc entry, no _COMM: the core file vouches), forged (another name,
# stays), forged-quick (another name, exits at once, COREDUMP_UID
# disagreeing with the core's name).
import ctypes, socket, subprocess, sys
exe, mode = sys.argv[1], sys.argv[2]
if not mode.startswith("forged"):
    ctypes.CDLL(None).prctl(15, b"systemd-coredump", 0, 0, 0)   # PR_SET_NAME
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for line in sys.stdin:
    # PID FILE [UID EXE [MAPPED]]: another user's crash, of another
    # executable; MAPPED: a file in its COREDUMP_PROC_MAPS
    pid, name, *other = line.split()
    uid = other[0] if other else "0" if mode == "forged-quick" else "1000"
    # core.COMM.UID.BOOT_ID.PID.TIMESTAMP[.zst|.xz|.lz4]: one field, both places
    ts = name.split(".")[5]
    fields = {"MESSAGE_ID": "fc2e22bc6ee647b6b90729ab34a250b1",
              "MESSAGE": "Process %s (crasher) of user %s dumped core." % (pid, uid),
              "PRIORITY": "2", "COREDUMP_PID": pid, "COREDUMP_UID": uid,
              "COREDUMP_GID": uid if other else "1000", "COREDUMP_SIGNAL": "11",
              "COREDUMP_SIGNAL_NAME": "SIGSEGV", "COREDUMP_TIMESTAMP": ts,
              "COREDUMP_COMM": "crasher", "COREDUMP_EXE": other[1] if other else exe,
              "COREDUMP_FILENAME": "/var/lib/systemd/coredump/" + name}
    if len(other) > 2:
        fields["COREDUMP_PROC_MAPS"] = (
            "555857174000-555857175000 r--p 00000000 08:01 4242                       %s\n"
            "555857175000-555857176000 r-xp 00001000 08:01 4243                       %s (deleted)\n"
            "7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0                          \n"
            "7ffd00001000-7ffd00002000 rw-p 00000000 00:00 0                          [stack]\n"
            % (other[2], other[0]))
    s.sendto(b"".join(("%s=%s\n" % kv).encode() if "\n" not in kv[1] else
                      kv[0].encode() + b"\n" + len(kv[1].encode()).to_bytes(8, "little") +
                      kv[1].encode() + b"\n" for kv in fields.items()),
             "/run/systemd/journal/socket")
if not mode.endswith("quick"):
    # journald reads _COMM from /proc/PID when it takes the datagram: we live
    # until it has taken every one sent before this
    subprocess.run(["journalctl", "--sync", "-q"], check=True)
EOP
cat > "$tmp/run.sh" <<EOS
d=/var/lib/systemd/coredump
zstd -q -c "$core" > \$d/core.crasher.1000.b.4201.1700000004201000.zst
xz -c "$core" > \$d/core.crasher.1000.b.4202.1700000004202000.xz
lz4 -q -c "$core" > \$d/core.crasher.1000.b.4203.1700000004203000.lz4
cp "$core" \$d/core.crasher.1000.b.4204.1700000004204000
cp "$core" \$d/core.crasher.1000.b.4299.1700000004299000
# cut short, and corrupt in the middle (the file's header intact)
zstd -q -c "$core" | head -c 4000 > \$d/core.crasher.1000.b.4205.1700000004205000.zst
xz -c "$core" > $tmp/x.xz && python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0xff; open(sys.argv[2], "wb").write(b)' $tmp/x.xz \$d/core.crasher.1000.b.4206.1700000004206000.xz
lz4 -q -c "$core" | head -c 4000 > \$d/core.crasher.1000.b.4207.1700000004207000.lz4
printf '4201 core.crasher.1000.b.4201.1700000004201000.zst\n4202 core.crasher.1000.b.4202.1700000004202000.xz\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" trusted
printf '4299 core.crasher.1000.b.4299.1700000004299000\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" forged
kill -STOP \$JOURNALD_PID
printf '4299 core.crasher.1000.b.4299.1700000004299000\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" forged-quick
kill -CONT \$JOURNALD_PID
journalctl --sync -q
"$daemon" --companion --once --store "$tmp/store" --config "$tmp/conf" --log journal
printf '4203 core.crasher.1000.b.4203.1700000004203000.lz4\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" trusted
# the quick sender gone (exited, reaped) before journald reads its datagram
kill -STOP \$JOURNALD_PID
printf '4204 core.crasher.1000.b.4204.1700000004204000\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" quick
kill -CONT \$JOURNALD_PID
# root's and a system user's (999) program in their own 0700 directories,
# and 999's crash naming root's: the process is gone (no /proc); the
# analysis (nobody) gets COREDUMP_EXE opened as the crashing user
for p in 4301.0 4302.999 4303.999 4304.999; do
	cp "$core" \$d/core.crasher.\${p#*.}.b.\${p%.*}.170000000\${p%.*}000
done
printf '4301 core.crasher.0.b.4301.1700000004301000 0 $tmp/u0/crasher\n4302 core.crasher.999.b.4302.1700000004302000 999 $tmp/u999/crasher\n4303 core.crasher.999.b.4303.1700000004303000 999 $tmp/u0/crasher\n4304 core.crasher.999.b.4304.1700000004304000 999 $tmp/u999/gone $tmp/u999/crasher\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" trusted
printf '4205 core.crasher.1000.b.4205.1700000004205000.zst\n4206 core.crasher.1000.b.4206.1700000004206000.xz\n4207 core.crasher.1000.b.4207.1700000004207000.lz4\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" trusted
journalctl --sync -q
# the second run starts after the first one's last entry
"$daemon" --companion --once --store "$tmp/store" --config "$tmp/conf" --log journal
journalctl --sync -q
# the stock-kernel LBR collector beside it (armed, a snapshot of the
# crashing thread, tests/helpers/lbrsnap.py): a core without a trace note
# gets the collector's, in the companion's entry
mkdir "$tmp/lbr"
cp "$notrace" \$d/core.crasher.1000.b.4401.1700000004401000
printf '4401 core.crasher.1000.b.4401.1700000004401000\n' |
	python3 "$tmp/send.py" "$src/tests/fixtures/crasher" trusted
journalctl --sync -q
python3 "$src/tests/helpers/lbrsnap.py" "$notrace" "$src/tests/fixtures/crasher-null.records" "$tmp/lbr" --arm \
	"$daemon" --companion --once --store "$tmp/store" --config "$tmp/conf" --log journal --lbr-dir "$tmp/lbr"
journalctl --sync -q
journalctl -D /run/log/journal -o json --no-pager SYSLOG_IDENTIFIER=btsdumpd > "$tmp/journal.json"
journalctl -D /run/log/journal -o json --no-pager MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 > "$tmp/coredump.json"
"$ctl" --store "$tmp/store" info 4202 > "$tmp/info.txt" 2>&1 || true
"$ctl" --store "$tmp/store" show --json 4401 > "$tmp/lbr.json" 2>&1 || true
EOS
journald_ns_run "$tmp/run.sh" /var/lib/systemd/coredump >"$tmp/run.log" 2>&1 || {
	echo "not ok 1 - the companion ran in a private journald"; sed 's/^/# /' "$tmp/run.log"; echo "1..1"; exit 1; }
# gdb on 4401's core as `coredumpctl debug` gives it (a decompressed copy),
# the package's bts.py, btsdumpctl reading the test's store; and on a core
# one byte apart (another crash: no entry names it)
printf '#!/bin/sh\nexec "%s" --store "%s" "$@"\n' "$ctl" "$tmp/store" > "$tmp/btsdumpctl"
chmod 0755 "$tmp/btsdumpctl"
cp "$notrace" "$tmp/coredump-4401"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-1] ^= 1; open(sys.argv[2], "wb").write(b)' \
	"$notrace" "$tmp/coredump-other"
for c in 4401 other; do
	BTSDUMP=$btsdump BTSDUMPCTL=$tmp/btsdumpctl timeout 120 gdb -nx -batch \
		-iex "source $src/gdb/bts.py" -ex "bts list" -ex "info bts" \
		"$src/tests/fixtures/crasher" "$tmp/coredump-$c" > "$tmp/gdb-$c.txt" 2>&1
done
SRC=$src exec python3 - "$tmp" <<'EOP'
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "helpers"))
from tap import Tap
import hashlib, json, re
tmp = sys.argv[1]
entries = [json.loads(l) for l in open(os.path.join(tmp, "journal.json")) if l.strip()]
mine = [e for e in entries if e.get("MESSAGE_ID") == "6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a"]
check = (t := Tap()).check
pids = sorted(e.get("COREDUMP_PID") for e in mine)
check(pids == ["4201", "4202", "4203", "4204", "4205", "4206", "4207", "4301", "4302", "4303", "4304",
              "4401"],
      "one btsdumpd entry per coredump entry (zstd, xz, lz4, plain, and three that do "
      "not decompress whole), none repeated by the second run", pids)
bad = {e.get("COREDUMP_PID"): e for e in mine if e.get("COREDUMP_PID") in ("4205", "4206", "4207")}
priv = {e.get("COREDUMP_PID"): e for e in mine if e.get("COREDUMP_PID", "").startswith("43")}
lbr = [e for e in mine if e.get("COREDUMP_PID") == "4401"]
good = [e for e in mine if e.get("COREDUMP_PID") not in bad and e.get("COREDUMP_PID") not in priv
        and e not in lbr]
check(len(bad) == 3 and all(e.get("BTSDUMPD_CORE_TRUNCATED") == "1" and
                            "did not decompress whole (corrupt or truncated)" in
                            e.get("BTSDUMPD_CORE_REASON", "") and
                            e.get("BTSDUMPD_CORE_REASON", "").startswith(
                                e.get("BTSDUMPD_COREDUMP_FILENAME", "?"))
                            for e in bad.values()),
      "zstd and lz4 cut short, xz corrupt: each entry says its core is cut, and which file",
      "\n".join(json.dumps(e)[:800] for e in bad.values()))
warned = [e.get("MESSAGE", "") for e in entries if "did not decompress whole" in e.get("MESSAGE", "")
          and e.get("MESSAGE_ID") != "6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a"]
check(len(warned) == 3 and not any(e.get("BTSDUMPD_CORE_TRUNCATED") for e in good),
      "a warning for each of the three, none for the good cores", warned)
for e in good:
    pid = e.get("COREDUMP_PID")
    check(e.get("COREDUMP_TIMESTAMP") == f"170000000{pid}000" and
          e.get("BTSDUMPD_PID") == pid and e.get("BTSDUMPD_TRACE") == "present" and
          e.get("BTSDUMPD_COREDUMP_FILENAME", "").startswith("/var/lib/systemd/coredump/core.crasher.1000.b." + str(pid)) and
          "dispatch+0x33" in e.get("BTSDUMPD_LAST_BRANCHES", "") and
          e.get("BTSDUMPD_FAULT", "").startswith("faulted at 0x0 = target of #"),
          f"PID {pid}: linked to its coredump entry (COREDUMP_PID, COREDUMP_TIMESTAMP), "
          "the trail with symbols, the fault", json.dumps(e)[:1500])
for pid, who in (("4301", "root's crash, its program in root's 0700 directory"),
                 ("4302", "a system user's (999) crash, its program in its 0700 directory"),
                 ("4304", "a system user's crash, its program gone from COREDUMP_EXE but "
                  "named in COREDUMP_PROC_MAPS, in its 0700 directory")):
    e = priv.get(pid, {})
    check(e.get("BTSDUMPD_TRACE") == "present" and
          "dispatch+0x33" in e.get("BTSDUMPD_LAST_BRANCHES", ""),
          f"companion: {who}: symbols (opened as that user)",
          json.dumps(e)[:1500])
e = priv.get("4303", {})
check(e.get("BTSDUMPD_TRACE") == "present" and
      "dispatch" not in e.get("BTSDUMPD_LAST_BRANCHES", "?") and
      "crasher+0x" in e.get("BTSDUMPD_LAST_BRANCHES", ""),
      "companion: a system user's crash naming a program it cannot read (root's "
      "0700 directory): not opened for it (module+offset)", json.dumps(e)[:1500])
sent = [json.loads(l) for l in open(os.path.join(tmp, "coredump.json")) if l.strip()]
sc = "systemd-coredum"
check([(e.get("COREDUMP_PID"), e.get("_COMM") if e.get("_COMM") in (None, sc) else "other")
       for e in sent] ==
      [("4201", sc), ("4202", sc), ("4299", "other"), ("4299", None), ("4203", sc),
       ("4204", None), ("4301", sc), ("4302", sc), ("4303", sc), ("4304", sc),
       ("4205", sc), ("4206", sc), ("4207", sc), ("4401", sc)],
      "journald read each sender's name while it lived, and none of the two quick "
      "ones' (gone before journald took their entries: no _COMM)",
      [(e.get("COREDUMP_PID"), e.get("_COMM"), e.get("_PID")) for e in sent])
refused = [e.get("MESSAGE", "") for e in entries if "not from systemd-coredump" in e.get("MESSAGE", "")]
check(not any(e.get("BTSDUMPD_PID") == "4299" for e in entries) and len(refused) == 2 and
      all("/core.crasher.1000.b.4299." in m for m in refused),
      "coredump entries sent by another process are ignored, and said so (the "
      "quick one's COREDUMP_UID disagrees with its core's name)", refused)
try:
    th = json.load(open(os.path.join(tmp, "lbr.json")))["threads"]
except (OSError, ValueError, KeyError) as e:
    th = repr(e)
check(len(lbr) == 1 and lbr[0].get("BTSDUMPD_TRACE") == "present" and
      "dispatch+0x33" in lbr[0].get("BTSDUMPD_LAST_BRANCHES", "") and
      isinstance(th, list) and [t.get("trace", {}).get("source") for t in th
                                if t.get("trace")] == ["lbr"],
      "companion beside the LBR collector: a core without a trace note gets its "
      "snapshot as the note of the companion's entry (journal, btsdumpctl show: "
      "source lbr)", (json.dumps(lbr)[:1500], str(th)[:500]))
store = os.path.join(tmp, "store")
ents = sorted(x for x in os.listdir(store) if not x.startswith("."))
check(len(ents) == 12 and os.path.exists(os.path.join(store, ".companion-cursor")),
      "twelve store entries and the cursor", ents)
meta = dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(store, ents[0], "meta"))
            if "=" in l) if ents else {}
check(meta.get("CORE") == "none" and "core.zst" not in os.listdir(os.path.join(store, ents[0])),
      "the core stays systemd-coredump's: not stored again (CORE=none)", meta)
info = open(os.path.join(tmp, "info.txt")).read()
check("dispatch+0x33" in info, "btsdumpctl info PID shows the trail of the coredump's PID", info)
lbr_ent = [x for x in ents if ".4401." in x]
meta = dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(store, lbr_ent[0], "meta"))
            if "=" in l) if lbr_ent else {}
digest = hashlib.sha256(open(os.path.join(tmp, "coredump-4401"), "rb").read()).hexdigest()
check(meta.get("COREDUMP_SHA256") == digest and
      os.path.getsize(os.path.join(store, lbr_ent[0], "lbr.note")) > 0,
      "the LBR note kept in the companion's entry (lbr.note) with the SHA-256 of "
      "systemd-coredump's core (COREDUMP_SHA256)", (meta, digest))
g = open(os.path.join(tmp, "gdb-4401.txt"), errors="replace").read()
check(f"kept by btsdumpd's companion in its entry {lbr_ent[0] if lbr_ent else '?'}" in g and
      re.search(r"call\s+0x\S+ <parse_request\+73> => 0x\S+ <dispatch>", g) and
      re.search(r"call\*\s+0x\S+ <dispatch\+51>\s+=> 0x0+\n", g) and
      re.search(r"\* 1\s+\d+\s+SIGSEGV\s+lbr\s+16\s+32", g),
      "gdb with bts.py on systemd-coredump's core (coredumpctl debug's copy): the "
      "companion's note, found by the core's SHA-256 (bts list, info bts: source lbr)", g)
g = open(os.path.join(tmp, "gdb-other.txt"), errors="replace").read()
check("this core has no branch trace" in g and "companion" not in g and "dispatch>" not in g,
      "gdb on a core one byte apart: no entry names it, no branches shown", g)
sys.exit(t.done())
EOP
