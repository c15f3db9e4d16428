#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Value recovery (lib/recover.c) against the truth: each crasher mode (an
# -O0 and an -O2 build) single-stepped from main to its fault in gdb,
# every register logged before every instruction (gdb-record-regs.py), a
# core written and the recorded branches added as its trace note; then
# every register bit the engine claims known, at every instruction of the
# trace, must equal what gdb logged there (zero wrong), the two ways of
# recovery must never disagree (no conflicts), and the share of
# general-purpose registers recovered is reported and held above a floor;
# `btsdump regs --back N --json` shows the same truth, and `btsdump why`
# names last writers gdb's run agrees with.
# The same on truth.c's and truth-virt.cc's crashes (a use after free, a
# memcpy overrun, a loop rewriting its counter, a C++ virtual call on a
# freed object), where `btsdump why` must also lead from the bad value
# to the store that made it.
# Usage: test-recover.py BTSDUMP RECOVER-DUMP CRASHER CRASHER-O2
#        TRUTH-O0 TRUTH-VIRT-O0 TRUTH-O2 TRUTH-VIRT-O2
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap  # noqa: E402
from recovery import GPRS, LAST, RF, compare, parse_engine, parse_truth, record  # noqa: E402

# The share of general-purpose register values recovered, over the last
# LAST instructions of a trace, below which a change is a regression.  The
# stack pointer alone is 1/16; these short -O0 and -O2 traces, run from
# main with a core holding every final value, recover far more (printed
# per program): the floor sits well under what they reach today and well
# over "rsp and a few constants".
FLOOR = 0.40
# The same through glibc's malloc and free (truth uaf, truth-virt): their
# tcache code reloads what it spilled and recovers less (35-50 % today)
FLOOR_HEAP = 0.25
BAD = 0x0000414141414141    # truth.c's and truth-virt.cc's bad word
BACK = (0, 1, 5, 20)


def check_program(tap, btsdump, dump, exe, args, label, start="main", floor=FLOOR,
                  origin=None):
    with tempfile.TemporaryDirectory() as tmp:
        try:
            core, recs = record(tmp, exe, args, start)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            tap.check(False, "%s: recorded under gdb" % label, str(e)[-2000:])
            return
        tid = [l.split()[2] for l in open(recs) if l.startswith("# tid")][0]
        subprocess.run([btsdump, "add-note", "--tid", tid, core, recs], check=True,
                       capture_output=True)
        out = subprocess.run([dump, core, exe], capture_output=True, text=True)
        truth = parse_truth(recs + ".regs")
        shown = {n: subprocess.run([btsdump, "regs", "--json", "--back", str(n), core, exe],
                                   capture_output=True, text=True)
                 for n in BACK}
        why = {g: subprocess.run([btsdump, "why", "--json", "--depth", "6", core, exe, g],
                                 capture_output=True, text=True)
               for g in GPRS + (["kind", "h"] if args == ["null"] else [])}
        org = None
        if origin:
            target, fn = origin
            if target == "bad":     # the register holding BAD at the fault
                target = next((g for g in GPRS if truth[-1][1][g] == BAD), None)
            org = (target, fn, truth[-1][1].get(target),
                   target and subprocess.run([btsdump, "why", "--json", "--depth", "6",
                                              core, exe, target],
                                             capture_output=True, text=True))
    if out.returncode:
        tap.check(False, "%s: recover-dump ran" % label, out.stderr)
        return
    conflicts, entries = parse_engine(out.stdout)
    c = compare(truth, entries)
    wrong, compared, share, last = c["wrong"], c["compared"], c["share"], c["last"]
    mem_known, mem_total = c["mem_known"], c["mem_total"]
    print("# %s: %.1f %% of the stack bytes around rsp recovered"
          % (label, 100 * mem_known / mem_total if mem_total else 0.0), flush=True)
    print("# %s: %d instructions compared, %.1f %% of general-purpose register "
          "values recovered, %.1f %% over the last %d (REPT reports 92 %% of data "
          "values)" % (label, compared, 100 * share, 100 * last, min(compared, LAST)),
          flush=True)
    tap.check(compared == len(entries) - 1 and compared > 0,
              "%s: every instruction of the trace is one gdb stepped (%d of %d)"
              % (label, compared, len(entries) - 1))
    tap.check(not wrong, "%s: every register and stack byte the engine claims is "
              "gdb's (%d wrong)"
              % (label, len(wrong)), "\n".join(wrong[:20]))
    tap.check(conflicts == 0, "%s: no conflicts (%d)" % (label, conflicts))
    tap.check(last >= floor, "%s: %.1f %% recovered over the last %d, floor %.0f %%"
              % (label, 100 * last, min(compared, LAST), 100 * floor))
    check_regs_tool(tap, label, shown, truth)
    check_why_tool(tap, label, why, truth)
    if org:
        check_origin(tap, label, *org)


def check_origin(tap, label, target, fn, real, out):
    """`btsdump why TARGET` at the fault starts from gdb's value and
    leads, within six links, to an instruction in function fn: the store
    (or the constant) the bad value came from."""
    if not target or out.returncode:
        tap.check(False, "%s: btsdump why leads to %s" % (label, fn),
                  "no register holds the bad value" if not target else out.stderr)
        return
    chain = json.loads(out.stdout)["chain"]
    root = chain[0]["what"] if chain else {}
    fns = [s["instruction"]["function"] or "?" for s in chain if s.get("instruction")]
    tap.check(root.get("value") is not None and int(root["value"], 16) == real and
              any(fn in f for f in fns),
              "%s: btsdump why %s (%s) leads to %s" % (label, target, root.get("value"), fn),
              "functions in the chain: %s" % " ".join(fns))


def check_regs_tool(tap, label, shown, truth):
    """`btsdump regs --back N --json` shows gdb's values N instructions
    before the fault, or unknown."""
    bad, known = [], 0
    for n, out in shown.items():
        if out.returncode or n >= len(truth):
            bad.append("--back %d: exit %d %s" % (n, out.returncode, out.stderr))
            continue
        real = truth[len(truth) - 1 - n][1]
        doc = json.loads(out.stdout)
        if (doc.get("schema"), doc.get("version")) != ("btscrash-regs", 7):
            bad.append("--back %d: schema %s version %s" % (n, doc.get("schema"),
                                                           doc.get("version")))
        for name, r in doc["registers"].items():
            if r is None:
                continue
            v, k = int(r["value"], 16), int(r["known"], 16)
            if n == 0 and name == "eflags":
                k &= ~RF
            known += k == 2**64 - 1
            if (v ^ real[name]) & k:
                bad.append("--back %d: %s = %x/%x, gdb %x" % (n, name, v, k, real[name]))
    tap.check(not bad and known, "%s: btsdump regs --back %s shows gdb's values (%d known)"
              % (label, "/".join(map(str, BACK)), known), "\n".join(bad[:20]))


def why_reg(name):
    """(full register, mask) of a 64- or 32-bit gdb name; None otherwise."""
    if name in GPRS:
        return name, 2**64 - 1
    full = {"e" + g[1:]: g for g in GPRS[:8]}
    full.update({g + "d": g for g in GPRS[8:]})
    return (full[name], 2**32 - 1) if name in full else None


def check_why_tool(tap, label, why, truth):
    """`btsdump why --json` against gdb's steps: every register a link
    explains holds gdb's value there, and it did not change in gdb's run
    between the instruction named as its last writer and that point (or
    since the trace began, for one no instruction wrote); stack memory a
    link explains holds gdb's bytes.  On the NULL call, C variables too
    (dispatch's kind and h, placed by btsdump with the DWARF at -O0 and
    -O2), or a refusal that says why."""
    bad, links, placed = [], 0, []
    for g, out in why.items():
        if g not in GPRS and out.returncode in (1, 3) and "there:" in out.stderr:
            continue    # a C variable not placed there (optimized out): said
        if g not in GPRS and not out.returncode:
            placed.append(g)
        if out.returncode:
            bad.append("why %s: exit %d %s" % (g, out.returncode, out.stderr))
            continue
        w = json.loads(out.stdout)
        off = len(truth) - 1 - w["instructions"]    # truth index of engine entry 0
        for s in w["chain"]:
            m = s["what"]
            at = w["instructions"] - s["back"]
            if m["kind"] == "memory" and m["address"] and m["value"] and at + off >= 0:
                mem = truth[at + off][2]
                addr = int(m["address"], 16)
                if all(addr + b in mem for b in range(m["size"])):
                    links += 1
                    real = sum(mem[addr + b] << 8 * b for b in range(m["size"]))
                    if (int(m["value"], 16) ^ real) & int(m["known"], 16):
                        bad.append("why %s: [%s] before entry %d: %s, gdb %x"
                                   % (g, m["address"], at, m["value"], real))
            r = why_reg(s["what"]["name"]) if s["what"]["kind"] == "register" else None
            at = w["instructions"] - s["back"]
            if r is None or at + off < 0:
                continue
            name, mask = r
            real = truth[at + off][1][name] & mask
            links += 1
            if s["what"]["value"] is not None and \
               (int(s["what"]["value"], 16) ^ real) & int(s["what"]["known"], 16):
                bad.append("why %s: %s before entry %d: %s, gdb %x"
                           % (g, name, at, s["what"]["value"], real))
            first = (s["instruction"]["index"] + 1 if s["from"] == "instruction"
                     else 0 if s["from"] == "before-trace" else None)
            if first is None or s.get("maybe"):
                continue
            for k in range(max(first + off, 0), at + off):
                if truth[k][1][name] & mask != real:
                    bad.append("why %s: %s changed in gdb's run at entry %d, after the "
                               "last writer the chain names (%s)"
                               % (g, name, k - off, s["instruction"]))
                    break
    tap.check(not bad and links, "%s: btsdump why's last writers agree with gdb's run "
              "(%d links; C variables placed: %s)" % (label, links, " ".join(placed) or "-"),
              "\n".join(bad[:20]))


def main():
    btsdump, dump, crasher, crasher_o2, truth0, virt0, truth2, virt2 = sys.argv[1:9]
    tap = Tap()
    modes = (["null"], ["abort"], ["rounds", "5"], ["write", "5"])
    # at -O2 fill() no longer reaches the return address: no smash there
    for exe, opt, extra in ((crasher, "-O0", [["smash"]]), (crasher_o2, "-O2", [])):
        for args in list(modes) + extra:
            check_program(tap, btsdump, dump, exe, args,
                          "crasher %s (%s)" % (" ".join(args), opt))
    # a worker thread's fault: a core with two threads, where only the
    # faulting thread's stack is followed in memory
    check_program(tap, btsdump, dump, crasher, ["threads"], "crasher threads (-O0)",
                  start="worker")
    for truth, virt, opt in ((truth0, virt0, "-O0"), (truth2, virt2, "-O2")):
        # where the bad value was made: the reused chunk's fill, memcpy's
        # stores (glibc's AVX-512 memmove), the loop past its array, the
        # word written into the freed object
        for mode, fn in (("uaf", "new_message"), ("memcpy", "memmove"),
                         ("counter", "add_all")):
            check_program(tap, btsdump, dump, truth, [mode], "truth %s (%s)" % (mode, opt),
                          floor=FLOOR_HEAP if mode == "uaf" else FLOOR,
                          origin=("rip", fn))
        check_program(tap, btsdump, dump, virt, [], "truth-virt (%s)" % opt,
                      floor=FLOOR_HEAP, origin=("bad", "main"))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
