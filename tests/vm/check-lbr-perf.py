#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks lbr-perf-vm.sh (perf's LBR users on an LBR model) as TAP: Linux's
Intel PMU driver with its LBR (MODEL arch: "Architectural LBR", 32 deep;
legacy: the model-specific 32-deep LBR), perf_cpu_time_max_percent 0
from the kernel command line, no kernel warning, the
recorder's LBR source saying it cannot use Arch LBR (arch), perf's two
recordings exiting 0; every sample of `perf record -b` equal to the
stack the model held at an NMI (lbr-log-nmi), in order, its entries
from entry 0 on (as many as Linux read: up to the first empty one, or
the whole depth), most taken in lbrcalls' inner loop (its newest
entries that loop's branch); every `--call-graph lbr` call chain equal to one made
of such a stack (entry 0's to, then each entry's from), in order; and
lbrcalls' samples in lc_f3 three calls deep: lc_f3 <- lc_c3 <- lc_c2 <-
lc_c1.  Where perf meets the LBR tail (lbr-perf-vm.sh): at least 90 % of
the cgs samples (lbrcalls-yield switching against a spinner) three calls
deep, perf having restored the task's stack at each switch-in, not read
the tail's kernel branches; in the w run (perf record -b -C 0 across an
LKDTM WARNING, the only warning allowed) lbrcalls' loop sampled after it,
perf's LBR on; in the n run (nullcall's handler sampled) a branch stack
holding nullcall's call to address 0.
Usage: check-lbr-perf.py MODEL CONSOLE DATA LBR_LOG LBRCALLS_SYMS YIELD_SYMS
NULLCALL_SYMS"""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "helpers"))
from tap import Tap  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "lbrlog", os.path.join(HERE, "..", "..", "qemu", "lbr-log.py"))
lbrlog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lbrlog)
MIN_SAMPLES = 10        # lbrcalls at -c 12007: about 80


def samples(data, run):
    """perf report -D's branch stacks of RUN (b or cg), in order: lists
    of (from, to) for b, of addresses (the call chain) for cg."""
    out, inside = [], False
    for line in data.splitlines():
        if not line.startswith("LBRP-%s: " % run):
            continue
        line = line.split(": ", 1)[1]
        if line.startswith("... "):     # a section: the callchain, ...
            inside = line.startswith("... branch")
            if inside:
                out.append([])
        elif inside:
            m = re.match(r"\.\.\.\.\. +\d+: ([0-9a-f]+)(?: -> ([0-9a-f]+))?",
                         line)
            if m and m.group(2):
                out[-1].append((int(m.group(1), 16), int(m.group(2), 16)))
            elif m:
                out[-1].append(int(m.group(1), 16))
    return out


def user(addr):
    return addr < 1 << 63


def as_chain(stack):
    """STACK as a user call chain: its entries up to the first empty one
    (where Linux stops reading a call stack), without those of kernel
    branches (Linux's software filter, intel_pmu_lbr_filter(), drops them
    from a user-only sample: they get in between the LBR reset on a
    context switch and the write of the new filter), then entry 0's to
    and each entry's from."""
    k = next((i for i, (f, _, _) in enumerate(stack) if not f), len(stack))
    kept = [(f, t) for f, t, _ in stack[:k] if user(f) and user(t)]
    return ([kept[0][1]] + [f for f, _ in kept]) if kept else []


def match(got, stacks, convert):
    """Greedy, in order: the index in STACKS of each of GOT, or the index
    in GOT of the first that matches none."""
    j = 0
    for i, s in enumerate(got):
        while j < len(stacks) and convert(stacks[j], s) != s:
            j += 1
        if j == len(stacks):
            return i
        j += 1
    return None


def main():
    model, console_path, data_path, log_path, syms_path, ysyms_path, nsyms_path = sys.argv[1:8]
    console = open(console_path, errors="replace").read()
    data = open(data_path, errors="replace").read().replace("\r", "")
    t = Tap()
    t.check("LBRP-DATA-DONE" in data and "LBRP-VM-DONE" in console,
            "the VM ran its init to the end, the data port got it all",
            console[-3000:])
    perf = [ln for ln in console.splitlines() if "Performance Events:" in ln]
    line = perf[0] if perf else "no line"
    arch = "Architectural LBR" in line
    t.check("Intel PMU driver" in line and "32-deep LBR" in line and
            arch == (model == "arch"),
            "Linux's Intel PMU driver, 32-deep LBR, %s" %
            ("Architectural LBR" if model == "arch" else "model-specific"),
            line)
    t.check("LBRP-BRANCHES: 32\n" in data, "caps/branches 32",
            [ln for ln in data.splitlines() if "BRANCHES" in ln])
    t.check("LBRP-CPU-TIME: 0\n" in data, "perf_cpu_time_max_percent 0 "
            "from the kernel command line (no PMI throttling)",
            [ln for ln in data.splitlines() if "CPU-TIME" in ln])
    bad = [ln for ln in console.splitlines()
           if re.search(r"WARNING: CPU|unchecked MSR|BUG:|Oops", ln)]
    lkdtm = [ln for ln in bad if "lkdtm" in ln]
    t.check(len(lkdtm) == 1 and len(bad) == 1,
            "no kernel warning but the w run's LKDTM WARNING",
            "\n".join(bad[:10]))
    if model == "arch":
        t.check("ds: no model-specific LBR in the Skylake format or "
                "LbrExtV2 on this CPU: LBR source off" in console,
                "the recorder's LBR source refuses Arch LBR in one line")
    for run in ("b", "cg", "cgs", "w", "n"):
        t.check("LBRP-RC: %s 0" % run in console,
                "perf record %s exited 0" % run,
                "\n".join(ln for ln in console.splitlines()
                          if "LBRP-SAID" in ln))
    stacks = lbrlog.nmi_stacks(lbrlog.read(log_path), 0)
    b, cg = samples(data, "b"), samples(data, "cg")
    syms, ysyms = read_syms(syms_path), read_syms(ysyms_path)
    check_b(t, b, stacks, syms)
    check_cg(t, cg, stacks, syms)
    check_tail(t, samples(data, "cgs"), samples(data, "w"), syms, ysyms)
    call = read_syms(nsyms_path)["nc_call"]
    n = samples(data, "n")
    kept = sum(1 for s in n if (call, 0) in s)
    t.check(kept > 0, "n: %d of %d samples in nullcall hold its call to "
            "address 0 (%#x -> 0), kept by perf's branch filter" %
            (kept, len(n), call))
    return t.done(prune=os.path.dirname(sys.argv[2]))


def read_syms(path):
    syms = {}
    for ln in open(path):
        f = ln.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return syms


def check_tail(t, cgs, w, syms, ysyms):
    """Where perf meets the LBR tail: H1, a task's saved LBR call stack
    restored at its switch-in (before, 17-30 % exact chains on this
    model); M2, perf's LBR left on by the recorder's bug trap (before, no
    loop sample after the WARNING)."""
    want = [ysyms["lc_f3"], ysyms["lc_c3"], ysyms["lc_c2"], ysyms["lc_c1"]]
    deep = sum(1 for c in cgs if c == want)
    t.check(len(cgs) >= MIN_SAMPLES and deep * 10 >= len(cgs) * 9,
            "cgs: %d of %d call chains of lbrcalls-yield (switched against "
            "a spinner) three calls deep (>= 90 %%)" % (deep, len(cgs)),
            "first chains: %s" % [[hex(a) for a in c] for c in cgs[:5]])
    loop = (syms["lc_jnz"], syms["lc_loop"])
    spin = sum(1 for s in w if s[:8] == [loop] * 8)
    t.check(spin >= MIN_SAMPLES, "w: %d of %d samples in lbrcalls' loop "
            "after the WARNING, its newest 8 entries the loop's branch "
            "(>= %d)" % (spin, len(w), MIN_SAMPLES))


def check_b(t, b, stacks, syms):
    full = [s for s in b if s]
    t.check(len(full) >= MIN_SAMPLES, "perf record -b: %d samples with a "
            "branch stack (>= %d)" % (len(full), MIN_SAMPLES))
    miss = match(b, stacks, lambda st, s: s if read_as_sample(st, s) else None)
    t.check(miss is None, "perf record -b: each of the %d samples equals "
            "the stack the model held at an NMI, in order (%d NMIs logged)"
            % (len(b), len(stacks)),
            "sample %s matches no later NMI stack: %s" %
            (miss, b[miss][:4] if miss is not None else ""))
    loop = (syms["lc_jnz"], syms["lc_loop"])
    spin = sum(1 for s in full if s[:8] == [loop] * 8)
    t.check(spin * 2 >= len(full) > 0, "perf record -b: %d of %d samples "
            "taken in lc_f3's loop, its newest 8 entries lc_jnz -> lc_loop"
            % (spin, len(full)), "first: %s" %
            [[(hex(f), hex(to)) for f, to in s[:3]] for s in full[:3]])


def read_as_sample(stack, sample):
    """Whether SAMPLE is STACK as Linux reads it into a -b sample: its
    first N entries, N the depth or where an empty one follows, less OTHER_BRANCH
    entries (Arch LBR's LBR_INFO.BR_TYPE 8-15, SDM Vol. 3B 18.1.3.1) that
    Linux's branch filter dropped (Skylake's format has no type: none
    dropped): it decodes their source instruction
    (intel_pmu_lbr_filter(), branch_type()), and an interrupt's, the
    interrupted one, is no branch (seen: a cold CI run's sample 7, one
    interrupt entry in 192 NMI stacks).  Every other entry must be there."""
    i = k = 0
    while i < len(sample) and k < len(stack):
        if sample[i] == stack[k][:2]:
            i += 1
        elif not (stack[k][2] >> 56) & 0x8:
            return False
        k += 1
    # an OTHER_BRANCH entry dropped after the sample's last one, too
    while i == len(sample) and k < len(stack) and stack[k][0] and (stack[k][2] >> 56) & 0x8:
        k += 1
    # all of it read, up to the depth or an empty entry
    return i == len(sample) and (k == len(stack) or stack[k][0] == 0)


def check_cg(t, cg, stacks, syms):
    t.check(len(cg) >= MIN_SAMPLES, "--call-graph lbr: %d samples (>= %d)"
            % (len(cg), MIN_SAMPLES))
    miss = match(cg, stacks, lambda st, s: as_chain(st))
    t.check(miss is None, "--call-graph lbr: each of the %d call chains "
            "equals the one of the stack the model held at an NMI, in "
            "order" % len(cg),
            "chain %s matches no later NMI stack: %s" %
            (miss, [hex(a) for a in cg[miss]] if miss is not None else ""))
    want = [syms["lc_f3"], syms["lc_c3"], syms["lc_c2"], syms["lc_c1"]]
    deep = sum(1 for c in cg if c == want)
    t.check(deep * 2 >= len(cg) > 0, "--call-graph lbr: %d of %d samples "
            "in lc_f3, three calls deep (lc_c3, lc_c2, lc_c1)" %
            (deep, len(cg)), "first chains: %s" %
            [[hex(a) for a in c] for c in cg[:3]])


if __name__ == "__main__":
    sys.exit(main())
