# SPDX-License-Identifier: GPL-2.0-or-later
# bts-aware gdb: `info bts`, `bts list`, `bts function-call-history` on a core
# file with btscrash trace notes, per thread, in the manner of gdb's `record`
# commands.  Loaded into gdb with `gdb -iex 'source bts.py' EXE CORE`
# (btsdumpctl's `gdb` does that).  Decoding is btsdump's (`--json --calls`,
# run once per core), so gdb shows the very branches btsdump and btsdumpd show.
import json
import os
import re
import shutil
import subprocess

import gdb

BTS_DEFAULT_COUNT = 10          # lines per `bts list` / call history page
BTS_KIND_WIDTH = 9              # len("interrupt"), the longest kind name
BTS_SYMBOL_WIDTH = 28           # from-symbol column, as btsdump's text

# btsdump's exit codes (docs/btsdump.md).
BTSDUMP_EXIT_UNREADABLE = 2
BTSDUMP_EXIT_NO_TRACE = 3
BTSDUMP_EXIT_REJECTED = 4

BTS_NO_CORE = "bts: no core file loaded"
BTS_NO_TRACE = ("bts: this core has no branch trace (the process was not "
                "traced, or its kernel lacks btscrash)")

# Where this file was sourced from: `source` sets __file__ while it runs.
_bts_script = os.path.abspath(globals().get("__file__") or "bts.py")


# ---- finding the core, btsdump, and the decoded trace ---------------------

def _bts_core_path():
    """The current inferior's core file, from `info target` (gdb 13 has no
    Python API for it): "Local core dump file:\\n\\t`PATH', file type ..."."""
    out = gdb.execute("info target", to_string=True)
    m = re.search(r"^Local core dump file:\s*\n\s*`(.*)', file type", out, re.M)
    return m.group(1) if m else None


def _bts_find_btsdump():
    """$BTSDUMP, then PREFIX/bin/btsdump when this script is installed as
    PREFIX/share/btscrash/gdb/bts.py, then PATH."""
    tried = []
    env = os.environ.get("BTSDUMP")
    if env:
        if os.access(env, os.X_OK) and not os.path.isdir(env):
            return env
        tried.append("$BTSDUMP=" + env)
    here = os.path.dirname(_bts_script)
    suffix = os.path.join("share", "btscrash", "gdb")
    if here.endswith(os.sep + suffix):
        cand = os.path.join(here[:-len(suffix)], "bin", "btsdump")
        if os.access(cand, os.X_OK):
            return cand
        tried.append(cand)
    found = shutil.which("btsdump")
    if found:
        return os.path.abspath(found)
    tried.append("btsdump in PATH")
    raise gdb.GdbError("bts: btsdump not found (tried %s); set BTSDUMP to its "
                       "path" % ", ".join(tried))


class _BtsCache:
    """btsdump's JSON per core, keyed by its path, mtime and size, the
    executable and btsdump; errors are kept too, so that `thread apply all`
    runs btsdump once."""
    entries = {}
    windows = {}        # (core key, tid, what) -> ((first, last), paging, mods)


def _bts_run_btsdump(btsdump, core, exe):
    args = [btsdump, "--json", "--calls", core]
    if exe and os.path.exists(exe):
        args.append(exe)
    try:
        p = subprocess.run(args, capture_output=True, text=True,
                           errors="replace")
    except OSError as e:
        return None, "bts: cannot run %s: %s" % (btsdump, e.strerror)
    err = p.stderr.strip()
    if p.returncode == BTSDUMP_EXIT_NO_TRACE:
        return None, BTS_NO_TRACE
    if p.returncode not in (0, BTSDUMP_EXIT_REJECTED):
        what = ("cannot read the core" if p.returncode == BTSDUMP_EXIT_UNREADABLE
                else "failed (exit %d)" % p.returncode)
        return None, "bts: %s %s: %s" % (btsdump, what, err or "no message")
    try:
        data = json.loads(p.stdout)
    except ValueError as e:
        return None, "bts: %s printed no valid JSON: %s" % (btsdump, e)
    for line in err.splitlines() if p.returncode else ():
        gdb.write("warning: %s\n" % line, gdb.STDERR)
    return data, None


def _bts_load():
    """(core key, btsdump's JSON) for the current inferior's core."""
    core = _bts_core_path()
    if not core:
        raise gdb.GdbError(BTS_NO_CORE)
    try:
        st = os.stat(core)
    except OSError as e:
        raise gdb.GdbError("bts: %s: %s" % (core, e.strerror))
    btsdump = _bts_find_btsdump()
    exe = gdb.current_progspace().filename
    key = (os.path.realpath(core), st.st_mtime_ns, st.st_size, exe, btsdump)
    if key not in _BtsCache.entries:
        data, err = _bts_run_btsdump(btsdump, core, exe)
        if data is not None:
            data["_btsdump"] = btsdump
        _BtsCache.entries[key] = (data, err)
    data, err = _BtsCache.entries[key]
    if err:
        raise gdb.GdbError(err)
    return key, data


def _bts_lwp(thread):
    pid, lwp, _ = thread.ptid
    return lwp or pid


def _bts_selected_trace():
    """(core key, the selected thread's JSON object with a trace)."""
    key, data = _bts_load()
    thread = gdb.selected_thread()
    if thread is None:
        raise gdb.GdbError("bts: no thread selected")
    lwp = _bts_lwp(thread)
    for t in data["threads"]:
        if t["tid"] == lwp and t.get("trace") is not None:
            return key, t
    raise gdb.GdbError("bts: thread %d (LWP %d) has no branch trace in this "
                       "core" % (thread.num, lwp))


# ---- arguments -------------------------------------------------------------

def _bts_modifiers(arg, allowed):
    """Splits gdb-style "/rs REST" into ({'r', 's'}, REST)."""
    mods = set()
    words = arg.split()
    while words and words[0].startswith("/"):
        for c in words.pop(0)[1:]:
            if c not in allowed:
                raise gdb.GdbError("bts: invalid modifier '%s' (valid: /%s)"
                                   % (c, "/".join(allowed)))
            mods.add(c)
    return mods, " ".join(words)


def _bts_number(s):
    try:
        n = int(s, 0)
    except ValueError:
        raise gdb.GdbError("bts: '%s' is not a number" % s)
    if n < 1:
        raise gdb.GdbError("bts: numbers start at 1, not %d" % n)
    return n


def _bts_window(arg, total, last_shown):
    """The 1-based inclusive range that ARG picks out of TOTAL entries.
    "-": the page before LAST_SHOWN, "" too when LAST_SHOWN is set (the
    newest page when not); "+": the page after; "N": the newest N;
    "FIRST,LAST", "FIRST,", ",LAST": that range, a page from FIRST, a
    page up to LAST."""
    page = BTS_DEFAULT_COUNT
    if arg in ("", "-"):
        if last_shown is None:
            return max(1, total - page + 1), total
        if last_shown[0] <= 1:
            raise gdb.GdbError("bts: at the start of the branch trace")
        return max(1, last_shown[0] - page), last_shown[0] - 1
    if arg == "+":
        if last_shown is None or last_shown[1] >= total:
            raise gdb.GdbError("bts: at the end of the branch trace")
        return last_shown[1] + 1, min(total, last_shown[1] + page)
    if "," not in arg:
        n = _bts_number(arg)
        return max(1, total - n + 1), total
    lo, hi = (s.strip() for s in arg.split(",", 1))
    if not lo and not hi:
        raise gdb.GdbError("bts: a range needs FIRST, LAST or both")
    first = _bts_number(lo) if lo else max(1, _bts_number(hi) - page + 1)
    last = _bts_number(hi) if hi else first + page - 1
    if first > last:
        raise gdb.GdbError("bts: the range %d,%d is backwards" % (first, last))
    if first > total:
        raise gdb.GdbError("bts: the range %d,%d is beyond the trace (1..%d)"
                           % (first, last, total))
    return first, min(last, total)


def _bts_pick(key, tid, what, arg, mods, total):
    """_bts_window() with paging state per core, thread and command: "-"
    and "+" page from the last range shown; no argument pages back only
    after a paging command with the same modifiers (gdb repeats a command
    on Enter), else it shows the newest page."""
    if total == 0:
        raise gdb.GdbError("bts: the trace of LWP %d is empty" % tid)
    paging = arg in ("", "-", "+")
    state = _BtsCache.windows.get((key, tid, what))
    last = state[0] if state else None
    if arg == "" and (not state or not state[1] or state[2] != mods):
        last = None
    win = _bts_window(arg, total, last)
    _BtsCache.windows[(key, tid, what)] = (win, paging, mods)
    return win


# ---- printing --------------------------------------------------------------

def _bts_symbol(sym, addr):
    """btsdump's JSON writes the address for an unknown symbol; gdb says ??."""
    return "??" if sym is None or sym == addr else sym


def _bts_marker_line(b):
    ts = b.get("timestamp_ns", 0)
    when = "%d.%09ds" % (ts // 1000000000, ts % 1000000000)
    if b.get("marker") == "gap":
        return "-- gap (%s), resumed at %s after %d ns --" % (
            b.get("reason"), when, b.get("gap_ns", 0))
    return "-- %s cpu %d at %s --" % (b.get("marker"), b.get("cpu", 0), when)


def _bts_branch_line(b, width, symw, mods):
    num = "%*d  " % (width, b["index"] + 1)
    if b["kind"] == "marker":
        return num + _bts_marker_line(b)
    line = "%s%-*s 0x%016x" % (num, BTS_KIND_WIDTH, b["kind"], int(b["from"], 16))
    if "r" in mods:
        return line + " => 0x%016x" % int(b["to"], 16)
    line += " %-*s => 0x%016x %s" % (
        symw, _bts_symbol(b.get("from_symbol"), b["from"]),
        int(b["to"], 16), _bts_symbol(b.get("to_symbol"), b["to"]))
    if "s" in mods and (b.get("from_line") or b.get("to_line")):
        line += "  [%s -> %s]" % (b.get("from_line") or "?",
                                  b.get("to_line") or "?")
    return line


def _bts_list(arg):
    mods, arg = _bts_modifiers(arg, "rs")
    key, t = _bts_selected_trace()
    branches = t["branches"]
    first, last = _bts_pick(key, t["tid"], "list", arg, mods,
                            len(branches))
    shown = branches[first - 1:last]
    width = len(str(len(branches)))
    symw = min(BTS_SYMBOL_WIDTH, max(
        [len(_bts_symbol(b.get("from_symbol"), b["from"]))
         for b in shown if b["kind"] != "marker"] or [0]))
    trace = t["trace"]
    if first == 1 and (trace["wrapped"] or trace["lost"]):
        gdb.write("%*s  -- older branches are gone (%s%d lost%s) --\n" % (
            width, "", "" if trace["lost_exact"] else ">=", trace["lost"],
            ", the ring wrapped" if trace["wrapped"] else ""))
    for b in shown:
        gdb.write(_bts_branch_line(b, width, symw, mods) + "\n")


def _bts_segment_line(s, width, nbranches, mods):
    name = s["function"] or s["address"]
    line = "%*d\t%s%s" % (width, s["index"] + 1,
                          "  " * s["depth"] if "c" in mods else "", name)
    if "l" in mods and s.get("file"):
        lines = ("%d" % s["line_min"] if s["line_min"] == s["line_max"]
                 else "%d,%d" % (s["line_min"], s["line_max"]))
        line += "\tat %s:%s" % (s["file"], lines)
    if "i" in mods and s["first_branch"] < nbranches:
        line += "\tbranches %d,%d" % (s["first_branch"] + 1,
                                      min(s["last_branch"], nbranches - 1) + 1)
    return line


def _bts_calls(arg):
    mods, arg = _bts_modifiers(arg, "cil")
    key, t = _bts_selected_trace()
    segs = t.get("calls") or []
    first, last = _bts_pick(key, t["tid"], "calls", arg, mods, len(segs))
    width = len(str(len(segs)))
    for s in segs[first - 1:last]:
        gdb.write(_bts_segment_line(s, width, len(t["branches"]), mods) + "\n")


def _bts_info():
    key, data = _bts_load()
    inferior = gdb.selected_inferior()
    by_lwp = {_bts_lwp(th): th for th in inferior.threads()}
    sel = gdb.selected_thread()
    gdb.write("Branch trace of %s (decoded by %s):\n"
              % (key[0], data["_btsdump"]))
    rows = [("", "Id", "LWP", "Faulting", "Source", "Records", "Capacity",
             "Wrapped", "Lost", "Gaps")]
    for t in data["threads"]:
        th = by_lwp.get(t["tid"])
        tr = t.get("trace")
        row = ["*" if th is not None and th == sel else "",
               str(th.num) if th is not None else "-", str(t["tid"]),
               (t.get("signal_name") or "yes") if t["faulting"] else "-"]
        if tr is None:
            row += ["none", "-", "-", "-", "-", "-"]
        else:
            row += [tr["source"], str(tr["records"]), str(tr["capacity"]),
                    ("yes" if tr["wrapped"] else "no") +
                    (", truncated" if tr["truncated"] else ""),
                    ("" if tr["lost_exact"] else ">=") + str(tr["lost"]),
                    str(tr["gaps"])]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        gdb.write(" ".join("%-*s" % (w, c) for w, c in zip(widths, r)).rstrip()
                  + "\n")
    for rej in data.get("rejected") or ():
        gdb.write("rejected: %s\n" % rej)


# ---- commands --------------------------------------------------------------

class BtsPrefix(gdb.Command):
    """Show the branch trace that btscrash wrote into this core file.

Usage: bts [list ARGS]
       bts list [/rs] [N | - | + | FIRST,LAST | FIRST, | ,LAST]
       bts function-call-history [/cil] [N | - | + | FIRST,LAST]
       info bts

The commands act on the selected thread; use "thread apply all bts list 5"
for every thread.  Branches are numbered from 1 (the oldest kept) to the
newest, the one that led to the crash, exactly as btsdump numbers them.
"bts" alone is "bts list"."""

    def __init__(self):
        super().__init__("bts", gdb.COMMAND_SUPPORT, prefix=True)

    def invoke(self, arg, from_tty):
        _bts_list(arg)


class BtsList(gdb.Command):
    """Print the selected thread's last taken branches, oldest first.

Usage: bts list [/rs] [N | - | + | FIRST,LAST | FIRST, | ,LAST]

Without an argument, the newest ten branches; repeated (or on Enter), the
ten before those, and so on back to the start.  "-": the ten before the
last ones shown, "+": the ten after.
N: the newest N branches.  FIRST,LAST: branches FIRST to LAST; FIRST,:
ten from FIRST; ,LAST: ten up to LAST.
Each line: NUMBER KIND FROM from-symbol => TO to-symbol.  KIND is call,
return, jump, cond, syscall, sysret, iret, interrupt or unknown; context
switches and gaps print as "-- switch-in cpu 0 at 1.000200000s --".
/r: raw addresses, no symbols.  /s: the source lines of both ends."""

    def __init__(self):
        super().__init__("bts list", gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_list(arg)


class BtsFunctionCallHistory(gdb.Command):
    """Print the selected thread's calls and returns, one line per function.

Usage: bts function-call-history [/cil] [N | - | + | FIRST,LAST | FIRST, | ,LAST]

One line per stretch of the trace spent in one function, oldest first,
like "record function-call-history".  The arguments pick lines as for
"bts list" (default: the newest ten; repeated: the ten before).
/c: indent by call depth.  /l: the source lines seen in that function.
/i: the numbers (as in "bts list") of the branches taken from it."""

    def __init__(self):
        super().__init__("bts function-call-history", gdb.COMMAND_SUPPORT,
                         gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_calls(arg)


class BtsCalls(gdb.Command):
    """Print the selected thread's calls and returns (bts function-call-history).

Usage: bts calls [/cil] [N | - | + | FIRST,LAST | FIRST, | ,LAST]
The same as "bts function-call-history"."""

    def __init__(self):
        super().__init__("bts calls", gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_calls(arg)


class InfoBts(gdb.Command):
    """Show the branch traces of the core file, one line per thread.

Usage: info bts

For each thread of the core: gdb's thread number, its LWP, whether it
faulted (and with which signal), where the trace came from (hardware or
emulation), the records kept, the ring's capacity, whether it wrapped,
how many records were lost and how many gaps the trace has.  "*" marks
the selected thread.  Notes that btsdump rejected are listed after."""

    def __init__(self):
        super().__init__("info bts", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError("bts: \"info bts\" takes no arguments")
        _bts_info()


BtsPrefix()
BtsList()
BtsFunctionCallHistory()
BtsCalls()
InfoBts()
