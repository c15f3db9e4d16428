#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# `btsdump why` (tools/btsdump-why.c over lib/why.c) and gdb's `bts why` on
# the fixture cores: the chain behind the NULL that crasher-null called
# names the load from the handlers table, a slot the trace never wrote,
# and the `and` that made the index; C expressions (h, kind, handlers[3])
# placed with its DWARF agree; every instruction expected is found
# in crasher's own disassembly (objdump), never written down here.
# --json is valid and consistent on every fixture; an unknown value (one
# btsdump regs shows unknown) reads "unknown"; bad input gets the exit
# codes the other modes use.
# Usage: test-why.py BTSDUMP
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures")
EXE = os.path.join(FIX, "crasher")
CORES = ["crasher-null.core", "crasher-smash.core", "crasher-abort.core",
         "crasher-threads.core"]
GPRS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
        "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags"]


def disasm(func):
    """[(address, text)] of FUNC in crasher, Intel syntax, from objdump."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "intel",
                          "--disassemble=" + func, EXE],
                         capture_output=True, text=True, check=True).stdout
    return [(int(m.group(1), 16), re.sub(r"\s+", " ", m.group(2).split("#")[0]).strip())
            for m in re.finditer(r"^\s*([0-9a-f]+):\s+(.*)$", out, re.M)]


def symbol(name):
    out = subprocess.run(["nm", EXE], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^([0-9a-f]+) \w %s$" % name, out, re.M).group(1), 16)


def last_before(insns, i, pattern):
    """The index of the last instruction before i matching pattern, and
    its match."""
    for k in range(i - 1, -1, -1):
        m = re.fullmatch(pattern, insns[k][1])
        if m:
            return k, m
    raise LookupError(pattern)


def expected_null_chain():
    """What crasher's code says produced the NULL dispatch called: the
    call through a register, the load of that register from a stack
    slot, the store of the slot, the load of the stored value from the
    handlers table, the `and` that made the index."""
    d = disasm("dispatch")
    start = d[0][0]
    call = next(k for k, (_, t) in enumerate(d) if re.fullmatch(r"call (\w+)", t))
    reg = re.fullmatch(r"call (\w+)", d[call][1]).group(1)
    load, m = last_before(d, call, r"mov %s,QWORD PTR (\[.*\])" % reg)
    slot = m.group(1)
    store, m = last_before(d, load, r"mov QWORD PTR %s,(\w+)" % re.escape(slot))
    table, _ = last_before(d, store, r"mov %s,QWORD PTR \[.*\]" % m.group(1))
    and_i, _ = last_before(d, table, r"and \w+,0x3")
    off = lambda k: d[k][0] - start  # noqa: E731
    return {"reg": reg, "call": off(call), "load": off(load), "store": off(store),
            "table": off(table), "and": off(and_i), "load_addr": d[load][0],
            "handlers": symbol("handlers")}


def run(*args):
    return subprocess.run([BTSDUMP, "why"] + list(args), capture_output=True,
                          text=True, errors="surrogateescape", timeout=120)


def why_json(core, target, *opts):
    p = run("--json", *opts, os.path.join(FIX, core), EXE, target)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def children(chain, k):
    return [c for c in chain if c["parent"] == k]


def check_null(tap):
    e = expected_null_chain()
    p, w = why_json("crasher-null.core", e["reg"])
    tap.check(p.returncode == 0 and w is not None, "why %s on crasher-null: JSON" % e["reg"],
              p.stderr)
    if w is None:
        return
    tap.check((w["schema"], w["version"]) == ("btscrash-why", 7) and w["back"] == 0,
              "schema btscrash-why, version 7", json.dumps(w)[:300])
    c = w["chain"]
    root = c[0]
    i = root["instruction"]
    ok = (root["what"]["value"] == "0x0" and i["function"] == "dispatch" and
          i["offset"] == e["load"] and root["from"] == "instruction")
    tap.check(ok, "%s = 0 was loaded at dispatch+%#x" % (e["reg"], e["load"]),
              json.dumps(root))
    bias = int(i["address"], 16) - e["load_addr"]
    k = 0
    # down the chain: the slot the register was loaded from, the value
    # stored there
    for kind, off, what in (("memory", e["store"], "its stack slot was stored"),
                            ("register", e["table"], "the stored value was loaded")):
        step = [s for s in children(c, k) if s["what"]["kind"] == kind]
        ok = len(step) == 1 and step[0]["instruction"]["offset"] == off
        tap.check(ok, "%s at dispatch+%#x" % (what, off), json.dumps(step))
        if not ok:
            return
        k = c.index(step[0])
    mem = [s for s in children(c, k) if s["what"]["kind"] == "memory"]
    lo = bias + e["handlers"]
    ok = (len(mem) == 1 and mem[0]["from"] == "before-trace" and
          mem[0]["what"]["symbol"] == "handlers" and
          mem[0]["what"]["value"] == "0x0" and mem[0]["instruction"] is None and
          lo <= int(mem[0]["what"]["address"], 16) < lo + 32 and
          int(mem[0]["what"]["address"], 16) % 8 == 0)
    tap.check(ok, "from a handlers[] slot (at %#x + 8 * i) the trace never wrote" % lo,
              json.dumps(mem))
    ands = [s for s in c if s["instruction"] and s["instruction"]["offset"] == e["and"]
            and s["instruction"]["function"] == "dispatch"]
    tap.check(len(ands) == 1 and ands[0]["operands"][1]["value"] == "0x3",
              "the index came from the and at dispatch+%#x" % e["and"], json.dumps(ands))

    p, w = why_json("crasher-null.core", "rip")
    r = w["chain"][0] if w else {}
    ok = (w is not None and r["instruction"]["offset"] == e["call"] and
          r["what"]["value"] == "0x0" and
          [o["value"] for o in r["operands"] if o.get("name") == e["reg"]] == ["0x0"])
    tap.check(ok, "rip = 0 came from call %s at dispatch+%#x" % (e["reg"], e["call"]),
              json.dumps(r))

    p = run(os.path.join(FIX, "crasher-null.core"), EXE, "$" + e["reg"])
    want = ["dispatch+%#x (crasher.c:" % e["load"], "dispatch+%#x" % e["table"],
            "a slot the trace never wrote", "handlers+0x"]
    tap.check(p.returncode == 0 and all(x in p.stdout for x in want),
              "the text names the load, the table load and the handlers slot",
              p.stdout + p.stderr)


def check_all(tap):
    """Every fixture, every register: valid, consistent JSON; the text
    shows no control byte."""
    bad, steps = [], 0
    for core in CORES:
        for reg in GPRS:
            p, w = why_json(core, reg, "--depth", "3")
            if w is None:
                bad.append("%s %s: exit %d %s" % (core, reg, p.returncode, p.stderr))
                continue
            nr = w["instructions"]
            for n, s in enumerate(w["chain"]):
                steps += 1
                at = nr - s["back"]
                i = s["instruction"]
                vals = [s["what"]] + s["operands"]
                if (s["parent"] is not None and s["parent"] >= n) or \
                   (i is not None and not 0 <= i["index"] < at) or \
                   (i is None) != (s["from"] in ("before-trace", "not-followed")) or \
                   any(v.get("value") is not None and
                       int(v["value"], 16) & ~int(v["known"], 16) for v in vals):
                    bad.append("%s %s: step %d: %s" % (core, reg, n, json.dumps(s)))
            t = run("--depth", "3", os.path.join(FIX, core), EXE, reg)
            if t.returncode or re.search(r"[\x00-\x09\x0b-\x1f\x7f]", t.stdout):
                bad.append("%s %s text: %r" % (core, reg, t.stdout[-300:]))
    tap.check(not bad and steps, "every fixture and register: %d links consistent" % steps,
              "\n".join(bad[:10]))


def check_unknown(tap):
    p, w = why_json("crasher-null.core", "*0x8")
    s = w["chain"][0] if w else {}
    tap.check(w is not None and s["what"]["value"] is None and s["what"]["known"] == "0x0",
              "memory the core lacks: value null", p.stdout + p.stderr)
    t = run(os.path.join(FIX, "crasher-null.core"), EXE, "*0x8")
    tap.check(t.returncode == 0 and "[0x8]/8 = unknown" in t.stdout,
              "... and 'unknown' in the text", t.stdout + t.stderr)
    # a register the engine could not prove, found by btsdump regs
    found = None
    for core in CORES:
        for back in (10, 30, 60, 80):
            p = subprocess.run([BTSDUMP, "regs", "--json", "--back", str(back),
                                os.path.join(FIX, core), EXE], capture_output=True, text=True)
            regs = json.loads(p.stdout)["registers"] if p.returncode == 0 else {}
            unknown = [r for r in GPRS[:16] if r in regs and regs[r] is None]
            if unknown:
                found = (core, back, unknown[0])
                break
        if found:
            break
    if not found:
        tap.skip("no unknown register in the fixtures")
        return
    core, back, reg = found
    p, w = why_json(core, reg, "--back", str(back))
    tap.check(w is not None and w["chain"][0]["what"]["value"] is None and w["back"] == back,
              "%s --back %d: the unknown %s is null in JSON" % (core, back, reg),
              p.stdout + p.stderr)
    t = run("--back", str(back), os.path.join(FIX, core), EXE, reg)
    tap.check(t.returncode == 0 and t.stdout.splitlines()[1].startswith("%s = unknown" % reg),
              "... and reads 'unknown' in the text", t.stdout + t.stderr)


def check_expressions(tap):
    """C expressions placed with crasher's DWARF: dispatch's local h (the
    pointer it called) starts at the store into its slot, its parameter
    kind at the store of the register it came in, handlers[3] is the
    slot the trace never wrote."""
    e = expected_null_chain()
    d = disasm("dispatch")
    kind_store = next(a for a, t in d if re.fullmatch(r"mov DWORD PTR \[rbp-0x\w+\],edi", t))
    cases = (("h", e["store"]), ("kind", kind_store - d[0][0]))
    for expr, off in cases:
        p, w = why_json("crasher-null.core", expr, "--depth", "1")
        i = w["chain"][0]["instruction"] if w else None
        tap.check(i is not None and i["function"] == "dispatch" and i["offset"] == off and
                  w["chain"][0]["what"]["kind"] == "memory",
                  "why %s: starts at its store, dispatch+%#x" % (expr, off),
                  p.stdout[:600] + p.stderr)
    p, w = why_json("crasher-null.core", "handlers[3]")
    s = w["chain"][0] if w else {}
    tap.check(w is not None and s["from"] == "before-trace" and s["what"]["value"] == "0x0" and
              s["what"]["symbol"] == "handlers" and s["what"]["offset"] == 24,
              "why handlers[3]: 0, a slot the trace never wrote", p.stdout[:600] + p.stderr)
    # the abort's pc is in libc: crasher's global is found in its module
    p, w = why_json("crasher-abort.core", "sink", "--depth", "1")
    s = w["chain"][0] if w else {}
    tap.check(w is not None and s["what"]["kind"] == "memory" and s["what"]["size"] == 4 and
              s["what"]["symbol"] == "sink" and s["what"]["offset"] == 0,
              "why sink on crasher-abort: the global of crasher's module",
              p.stdout[:600] + p.stderr)
    for expr, text in (("nosuch", "no variable nosuch"), ("handlers", "not of 1, 2, 4 or 8"),
                       ("h->x", "not a struct")):
        p = run(os.path.join(FIX, "crasher-null.core"), EXE, expr)
        tap.check(p.returncode == 1 and text in p.stderr and not p.stdout,
                  "why %s: exit 1, says %r" % (expr, text), p.stderr)


def check_errors(tap):
    null = os.path.join(FIX, "crasher-null.core")
    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, "cut.core")
        with open(null, "rb") as f, open(cut, "wb") as g:
            g.write(f.read(20000))
        cases = [
            ((null, EXE, "xmm0"), 1, "not a register"),
            ((null, EXE, "*0x10,3"), 1, "not a register"),
            ((null,), 1, "missing"),
            (("--depth", "1000", null, "rdx"), 1, "--depth"),
            (("--thread", "1", null, "rdx"), 5, "no thread"),
            (("--back", "100000", null, "rdx"), 3, "only"),
            ((os.path.join(FIX, "crasher-notrace.core"), EXE, "rdx"), 3, "no trace"),
            ((cut, "rdx"), 2, "truncated"),
        ]
        for args, code, text in cases:
            p = run(*args)
            tap.check(p.returncode == code and text in p.stderr and not p.stdout,
                      "why %s: exit %d, says %r" % (" ".join(os.path.basename(a) for a in args),
                                                   code, text),
                      "exit %d\n%s" % (p.returncode, p.stderr))
    p = run("--help")
    tap.check(p.returncode == 0 and "REGISTER" in p.stdout and "->FIELD" in p.stdout,
              "--help names the forms", p.stdout)


def check_gdb(tap):
    if not shutil.which("gdb"):
        tap.skip("gdb not installed")
        return
    e = expected_null_chain()
    env = dict(os.environ, BTSDUMP=os.path.abspath(BTSDUMP))
    p = subprocess.run(["gdb", "-batch", "-nx", "-q", "-iex",
                        "source " + os.path.join(HERE, "..", "gdb", "bts.py"),
                        "-ex", "bts why $" + e["reg"], "-ex", "up", "-ex", "echo ==\\n",
                        "-ex", "bts why h", "-ex", "bts why $xmm0", EXE,
                        os.path.join(FIX, "crasher-null.core")],
                       capture_output=True, text=True, env=env, timeout=120)
    first, _, second = p.stdout.partition("==\n")
    tap.check("dispatch+%d (crasher.c:" % e["load"] in first and
              "a slot the trace never wrote" in first and " handlers+" in first,
              "gdb: bts why $%s names the load and the slot" % e["reg"], p.stdout + p.stderr)
    lines = second.splitlines()
    tap.check(len(lines) > 1 and "dispatch+%d" % e["store"] in lines[1] and
              "dispatch+%d" % e["table"] in second,
              "gdb: bts why h (dispatch's local) starts at its store", second + p.stderr)
    tap.check("not a register nor an address" in p.stderr, "gdb: bts why $xmm0 refused",
              p.stderr)


def main():
    global BTSDUMP
    BTSDUMP = sys.argv[1]
    tap = Tap()
    check_null(tap)
    check_all(tap)
    check_unknown(tap)
    check_expressions(tap)
    check_errors(tap)
    check_gdb(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
