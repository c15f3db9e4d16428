# SPDX-License-Identifier: GPL-2.0-or-later
"""What the models' oracle logs have in common, for their two readers
(bts-log.py, lbr-log.py): a file of fixed-size little-endian entries in the
order the model wrote them, each naming its vCPU; reading all of it, its
last entries per vCPU from the end, and the command line that prints it.
A reader supplies the entry's struct, its class and the index of the cpu
field."""

import argparse
import os
import sys

KINDS = {0: "near", 1: "far", 2: "int"}   # the `kind` field of both logs


class FormatError(ValueError):
    pass


def check_size(size, entry):
    """FormatError unless SIZE bytes are a whole number of ENTRY structs."""
    if size % entry.size:
        raise FormatError("%d bytes is not a multiple of %d" % (size, entry.size))


def parse(data, entry, cls):
    """CLS objects of the log's bytes DATA, whose entries are ENTRY structs."""
    check_size(len(data), entry)
    return [cls(*t) for t in entry.iter_unpack(data)]


def read(path, entry, cls):
    """The log file at PATH, in the order it was written."""
    with open(path, "rb") as f:
        return parse(f.read(), entry, cls)


def tail(path, n, cpus, entry, cls, cpu_field, chunk=1 << 20):
    """{cpu: [CLS, ...]}: the last N entries of each vCPU in CPUS, oldest
    first, read from the end of the log (a kernel-branch log runs to
    gigabytes; only as much of its end as needed is read: a vCPU that
    stopped early, as one frozen by an oops while the others ran on, is
    further back).  A vCPU with fewer than N in the whole log gets what
    there is.  CPU_FIELD: the index of the cpu in an unpacked entry."""
    size = os.path.getsize(path)
    check_size(size, entry)
    per, end = {c: [] for c in cpus}, size
    chunk -= chunk % entry.size
    with open(path, "rb") as f:
        while end > 0 and any(len(v) < n for v in per.values()):
            start = max(0, end - chunk)
            f.seek(start)
            data = f.read(end - start)
            for t in reversed(list(entry.iter_unpack(data))):
                got = per.get(t[cpu_field])
                if got is not None and len(got) < n:
                    got.append(cls(*t))
            end = start
    return {c: v[::-1] for c, v in per.items()}


def main(argv, name, description, read_fn, filters):
    """The readers' CLI: `NAME [--cpu N] [FILTERS] [--tail N] FILE`, one
    entry per line (str(entry)).  FILTERS: [(option, argparse keywords,
    predicate(entry, value))].  Exit 0; 1 on an unreadable or malformed
    file; 2 on bad usage."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--cpu", type=int, help="only this vCPU")
    for opt, kw, _ in filters:
        ap.add_argument(opt, **kw)
    ap.add_argument("--tail", type=int, help="only the last N entries")
    ap.add_argument("file")
    args = ap.parse_args(argv)
    try:
        entries = read_fn(args.file)
    except (OSError, FormatError) as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        return 1
    tests = [(lambda e, v: e.cpu == v, args.cpu)]
    tests += [(pred, getattr(args, opt.lstrip("-"))) for opt, _, pred in filters]
    entries = [e for e in entries
               if all(v is None or pred(e, v) for pred, v in tests)]
    if args.tail is not None:
        entries = entries[-args.tail:] if args.tail else []
    try:
        for e in entries:
            print(e)
    except BrokenPipeError:
        pass
    return 0
