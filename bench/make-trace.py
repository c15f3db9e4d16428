#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The benchmark's large trace: N records (default 1 M) of real branches at the
# load addresses of tests/fixtures/crasher-abort.core -- its recorded branches
# (PIE, PLT, glibc's abort path) and real branches of the glibc it maps --
# repeated and shuffled with a fixed seed.  Writes the `btsdump add-note`
# records file and the address list (from, to of each record) for eu-addr2line.
"""Usage: make-trace.py [options] RECORDS_OUT ADDRS_OUT"""
import argparse
import os
import random
import re
import struct
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
SEED = 20261122


def fixture_records(path):
    recs = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 2 and not fields[0].startswith("#"):
                recs.append((int(fields[0], 0), int(fields[1], 0)))
    return recs


def core_module(core, name):
    """(start, path) of module `name` in the core, if eu-unstrip found the
    file with the core's build-id; else None."""
    try:
        out = subprocess.run(["eu-unstrip", "-n", "--core=" + core],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in out.splitlines():
        f = line.split()
        # START+SIZE BUILDID@ADDR FILE DEBUGFILE MODNAME
        if len(f) >= 5 and f[4] == name and f[2] not in ("-", "."):
            return int(f[0].split("+")[0], 16), f[2]
    return None


def first_load_vaddr(path):
    """Page-aligned p_vaddr of the first PT_LOAD (to turn a module's start
    address into its load bias)."""
    with open(path, "rb") as f:
        eh = f.read(64)
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    vaddrs = [struct.unpack_from("<Q", ph, i * phentsize + 16)[0]
              for i in range(phnum)
              if struct.unpack_from("<I", ph, i * phentsize)[0] == 1]
    return min(vaddrs) & ~0xfff


INSN = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
DIRECT = re.compile(r"^(?:bnd\s+)?(call|j[a-z]+)\s+([0-9a-f]+) <")
RET = re.compile(r"^(?:bnd\s+|rep[a-z]*\s+)?ret")


def libc_branches(path, bias):
    """Real branches of glibc's .text: (from, to) for every direct call, jump
    and conditional jump (to = its target), and every `ret` (to = the return
    site of some call, assigned later).  Indirect ones are left out."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text",
                          path], capture_output=True, text=True,
                         check=True).stdout
    direct, rets, return_sites = [], [], []
    after_call = False
    for line in out.splitlines():
        m = INSN.match(line)
        if not m:
            continue
        addr, text = int(m.group(1), 16) + bias, m.group(2).strip()
        if after_call:
            return_sites.append(addr)
        after_call = False
        d = DIRECT.match(text)
        if d:
            direct.append((addr, int(d.group(2), 16) + bias))
            after_call = d.group(1) == "call"
        elif RET.match(text):
            rets.append(addr)
    return direct, rets, return_sites


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("records_out")
    ap.add_argument("addrs_out")
    ap.add_argument("-n", "--records", type=int, default=1000000)
    ap.add_argument("--core", default=os.path.join(FIX, "crasher-abort.core"))
    ap.add_argument("--base", default=os.path.join(FIX, "crasher-abort.records"),
                    help="recorded branches to repeat")
    ap.add_argument("--libc-branches", type=int, default=2000,
                    help="distinct glibc branches to add (0: none)")
    ap.add_argument("--base-share", type=float, default=0.25,
                    help="share of records drawn from --base")
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    base = fixture_records(a.base)
    extra = []
    libc = core_module(a.core, "libc.so.6") if a.libc_branches else None
    if a.libc_branches and not libc:
        print("make-trace: glibc of the core not found on this machine "
              "(build-id); only the recorded branches are used", file=sys.stderr)
    elif libc:
        start, path = libc
        direct, rets, sites = libc_branches(path, start - first_load_vaddr(path))
        # Sorted before sampling so the choice depends on the seed only.
        pool = sorted(direct) + [(r, None) for r in sorted(rets)]
        extra = rng.sample(pool, min(a.libc_branches, len(pool)))
        extra = [(f, t if t is not None else rng.choice(sites)) for f, t in extra]

    n_base = a.records if not extra else round(a.records * a.base_share)
    recs = [base[i % len(base)] for i in range(n_base)]
    recs += [extra[i % len(extra)] for i in range(a.records - n_base)]
    rng.shuffle(recs)

    with open(a.records_out, "w") as r, open(a.addrs_out, "w") as ad:
        r.write("# %d records for the benchmark (bench/make-trace.py, seed %d)\n"
                % (a.records, a.seed))
        for f, t in recs:
            r.write("0x%x 0x%x\n" % (f, t))
            ad.write("0x%x\n0x%x\n" % (f, t))
    uniq = {x for rec in set(recs) for x in rec}
    print("make-trace: %d records, %d distinct branches, %d distinct addresses "
          "(%d recorded branches, %d glibc branches)"
          % (len(recs), len(set(recs)), len(uniq), len(base), len(extra)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
