# SPDX-License-Identifier: GPL-2.0-or-later
# Value recovery's truth, shared by tests/test-recover.py (which asserts
# it), tests/test-gdb-replay.py, tests/vm/check-vm.py and
# bench/recover-bench.py: a program single-stepped in gdb with every
# register logged (gdb-record-regs.py), the parsers of that log and of
# recover-dump's output (tests/helpers/recover-dump.c), and their
# comparison.
import os
import subprocess

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPRS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
        "r10", "r11", "r12", "r13", "r14", "r15"]
RF = 0x10000    # the resume flag: the core's, set at the fault; gdb's $eflags hides it
# The instructions before the fault the floor applies to (REPT measures
# its share over a trace's last 1,000 or fewer)
LAST = 1000


def record(tmp, exe, args, start):
    """Runs exe under gdb-record-regs.py from function start; returns
    (core, records)."""
    core = os.path.join(tmp, "core")
    recs = os.path.join(tmp, "records")
    env = dict(os.environ, BTS_RECORDS=recs, BTS_CORE=core, BTS_START=start)
    out = subprocess.run(["gdb", "-batch", "-nx", "-q", "-x",
                          os.path.join(TESTS, "gdb-record-regs.py"), "--args", exe] + args,
                         env=env, capture_output=True, text=True, timeout=300)
    if not os.path.exists(core):
        raise RuntimeError("gdb wrote no core:\n" + out.stdout + out.stderr)
    return core, recs


def parse_mem(text):
    """"ADDR:BYTES" -> {address: byte}, "??" bytes left out."""
    lo, hexes = text.split(":")
    lo = int(lo, 16)
    return {lo + i // 2: int(hexes[i:i + 2], 16) for i in range(0, len(hexes), 2)
            if hexes[i:i + 2] != "??"}


def parse_truth(path):
    states = []
    with open(path) as f:
        for line in f:
            w = line.split()
            regs = {k: v for k, v in (x.split("=") for x in w[1:])}
            mem = parse_mem(regs.pop("mem"))
            states.append((int(w[0], 16), {k: int(v, 16) for k, v in regs.items()}, mem))
    return states


def parse_engine(text):
    lines = text.splitlines()
    head = lines[0].split()
    entries = []
    for line in lines[1:]:
        w = line.split()
        regs, mem = {}, {}
        for x in w[2:]:
            name, vk = x.split("=")
            if name == "mem":
                mem = parse_mem(vk)
                continue
            v, k = vk.split("/")
            regs[name] = (int(v, 16), int(k, 16))
        entries.append((w[1], regs, mem))
    return int(head[3]), entries


def compare(truth, entries):
    """The engine's entries against gdb's steps, aligned from the end (the
    engine's last entry is the final state, truth's last; its
    instructions the newest ones gdb stepped): the wrong values, the
    instructions compared, the share of general-purpose registers
    recovered over all of them and over the last LAST, the stack bytes
    known of those gdb logged.  bench/recover-bench.py and tests/vm/check-vm.py use them too."""
    wrong, known, total, compared, known_last = [], 0, 0, 0, 0
    mem_known = mem_total = 0
    t = len(truth) - 1
    for e in range(len(entries) - 1, -1, -1):
        what, regs, mem = entries[e]
        if what == "gap" or t < 0:
            break
        pc, real, real_mem = truth[t]
        for a, b in mem.items():
            if a in real_mem and real_mem[a] != b:
                wrong.append("entry %d (0x%x) memory at 0x%x: engine %02x, gdb %02x"
                             % (e, pc, a, b, real_mem[a]))
        mem_known += sum(1 for a in mem if a in real_mem)
        mem_total += len(real_mem)
        if what != "end" and int(what, 16) != pc:
            wrong.append("entry %d at %s, gdb stepped 0x%x there" % (e, what, pc))
            break
        for name, (v, k) in regs.items():
            if what == "end" and name == "eflags":
                k &= ~RF    # the core's, set at the fault; gdb's $eflags hides it
            if (v ^ real[name]) & k:
                wrong.append("entry %d (0x%x) %s: engine %x/%x, gdb %x"
                             % (e, pc, name, v, k, real[name]))
        if what != "end":
            compared += 1
            total += len(GPRS)
            k = sum(1 for g in GPRS if g in regs and regs[g][1] == 2**64 - 1)
            known += k
            if compared <= LAST:
                known_last += k
        t -= 1
    share = known / total if total else 0.0
    last = known_last / (min(compared, LAST) * len(GPRS)) if compared else 0.0
    return {"wrong": wrong, "compared": compared, "share": share, "last": last,
            "mem_known": mem_known, "mem_total": mem_total}
