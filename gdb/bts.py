# SPDX-License-Identifier: GPL-2.0-or-later
# bts-aware gdb: `info bts`, `bts list` (`bts branch-history`),
# `bts function-call-history`, `bts instruction-history` and `bts why` on a core file
# with btscrash trace notes, per thread, in the manner of gdb's `record`
# commands.  Loaded into gdb with `gdb -iex 'source bts.py' EXE CORE`
# (btsdumpctl's `gdb` does that).  The records are btsdump's (`--json
# --calls`, run once per core), so gdb shows the very branches btsdump and
# btsdumpd show; symbols, source lines and instructions are gdb's own (its
# symbol tables, separate debuginfo, shared libraries, disassembler), and the
# instructions between two branches are rebuilt from the code gdb reads.
# A core without a trace gets the note btsdumpd's companion kept for it
# (systemd-coredump's core, `coredumpctl debug`), found by its SHA-256.
import atexit
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import gdb

BTS_DEFAULT_COUNT = 10          # lines per `bts list` page
BTS_KIND_WIDTH = 9              # len("interrupt"), the longest kind name
BTS_SYMBOL_WIDTH = 32           # from-symbol column
# The longest straight run of code rebuilt between two branches: a run
# longer than this is taken for a transfer the trace did not see.
BTS_MAX_RUN_BYTES = 256 * 1024

# btsdump's exit codes (tools/exit.h, docs/btsdump.md).
BTSDUMP_EXIT_UNREADABLE = 2
BTSDUMP_EXIT_NO_TRACE = 3
BTSDUMP_EXIT_REJECTED = 4

BTS_NO_CORE = "bts: no core file loaded"
BTS_NO_TRACE = ("bts: this core has no branch trace (the process was not "
                "traced, or its kernel lacks btscrash)")



class _BtsNothing(Exception):
    """Nothing to show, which is no error: a core without trace, an empty
    trace, a thread without one.  Printed as a message; the command (and a
    `thread apply all`, and a batch session) goes on."""


# Where this file was sourced from: `source` sets __file__ while it runs.
_bts_script = os.path.abspath(globals().get("__file__") or "bts.py")


# ---- finding the core, btsdump, and the decoded trace ---------------------

def _bts_escape(text):
    """TEXT (a str, a path from os.fsdecode(), or bytes) as lib/escape.c
    shows untrusted bytes to people (docs/btsdump.md "Output safety"):
    control bytes (C0, DEL, C1) and bytes that are not valid UTF-8 as
    \\xHH, a backslash as \\\\, the rest as it is.  Every path or name from
    a core or from btsdump's JSON reaches the terminal through here."""
    if isinstance(text, list):          # btsdump's JSON: a non-UTF-8 string
        text = bytes(text)
    if isinstance(text, str):
        text = os.fsencode(text)
    out = []
    for c in text.decode("utf-8", "surrogateescape"):
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif 0xdc80 <= o <= 0xdcff:     # a byte that is not valid UTF-8
            out.append("\\x%02x" % (o - 0xdc00))
        elif o < 0x20 or 0x7f <= o <= 0x9f:
            out.append("".join("\\x%02x" % b for b in c.encode()))
        else:
            out.append(c)
    return "".join(out)


def _bts_served(inferior):
    """The core `bts target` serves to INFERIOR, while its connection is
    the stub's; else None."""
    served = _BtsCache.served.get(inferior.num)
    conn = inferior.connection
    if served and conn is not None and (conn.num, conn.details) == served[1]:
        return served[0]
    return None


def _bts_core_path():
    """The current inferior's core file, from `info target` (gdb 13 has no
    Python API for it): "Local core dump file:\\n\\t`PATH', file type ...".
    A path that is not UTF-8 comes back as os.fsdecode() makes it (gdb's
    text is bytes; its Python decodes it strictly)."""
    try:
        out = os.fsencode(gdb.execute("info target", to_string=True))
    except UnicodeDecodeError as e:
        out = e.object
    m = re.search(rb"^Local core dump file:\s*\n\s*`(.*)', file type", out, re.M)
    if m:
        return os.fsdecode(m.group(1))
    return _bts_served(gdb.selected_inferior())


def _bts_find_tool(name):
    """$NAME (upper case), then PREFIX/bin/NAME when this script is installed
    as PREFIX/share/btscrash/gdb/bts.py, then PATH."""
    tried = []
    var = name.upper()
    env = os.environ.get(var)
    if env:
        if os.access(env, os.X_OK) and not os.path.isdir(env):
            return env
        tried.append("$%s=%s" % (var, env))
    here = os.path.dirname(_bts_script)
    suffix = os.path.join("share", "btscrash", "gdb")
    if here.endswith(os.sep + suffix):
        cand = os.path.join(here[:-len(suffix)], "bin", name)
        if os.access(cand, os.X_OK):
            return cand
        tried.append(cand)
    found = shutil.which(name)
    if found:
        return os.path.abspath(found)
    tried.append(name + " in PATH")
    raise gdb.GdbError("bts: %s not found (tried %s); set %s to its "
                       "path" % (name, ", ".join(tried), var))


def _bts_find_btsdump():
    return _bts_find_tool("btsdump")


class _BtsCache:
    """btsdump's JSON per core, keyed by its path, mtime and size, the
    executable and btsdump; errors are kept too, so that `thread apply all`
    runs btsdump once."""
    entries = {}
    windows = {}        # (core key, tid, what) -> ((first, last), paging, mods)
    insns = {}          # (core key, tid, flavor, sysroot) -> _BtsInsns
    served = {}         # inferior number -> (core, (connection num, details))


# The btsdump JSON this file reads (docs/json.md).
BTS_JSON_SCHEMA = "btscrash-core"
BTS_JSON_VERSION = 7


def _bts_run_btsdump(btsdump, core, exe):
    # gdb symbolizes with its own symbols: btsdump decodes, classifies and
    # splits the call history, without symbols (nothing done twice)
    args = [btsdump, "--json", "--calls", "--no-symbols", core]
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
    if (data.get("schema"), data.get("version")) != (BTS_JSON_SCHEMA, BTS_JSON_VERSION):
        return None, ("bts: %s writes JSON schema %s version %s, this gdb/bts.py reads "
                      "%s version %d (docs/json.md): use the btsdump of the same build"
                      % (btsdump, data.get("schema"), data.get("version"),
                         BTS_JSON_SCHEMA, BTS_JSON_VERSION))
    for line in err.splitlines() if p.returncode else ():
        gdb.write("warning: %s\n" % line, gdb.STDERR)
    return data, None


# ---- btsdumpd's companion: the LBR note kept for systemd-coredump's core -----
# Beside systemd-coredump, btsdumpd keeps the stock-kernel LBR collector's
# note in its own entry (lbr.note) with the SHA-256 of systemd-coredump's
# core (COREDUMP_SHA256; docs/btsdumpd.md "Companion mode"): a core without
# a trace whose digest an entry names gets that note, added to a copy.

BTS_LBR_NOTE = "lbr.note"       # store/entries.h, BTSDUMPD_LBR_NOTE


def _bts_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _bts_companion_notes(core):
    """{note bytes: entry id} of btsdumpd's entries kept for this core that
    the user can read ({} without btsdumpctl or a store); the core is
    digested only when some entry has a note."""
    try:
        ctl = _bts_find_tool("btsdumpctl")
        p = subprocess.run([ctl, "--json", "--no-pager", "list"],
                           capture_output=True, text=True, errors="replace")
        entries = json.loads(p.stdout) if p.returncode == 0 else []
    except (gdb.GdbError, OSError, ValueError):
        return {}
    notes = {}
    kept = [e for e in (entries if isinstance(entries, list) else [])
            if isinstance(e, dict) and isinstance(e.get("COREDUMP_SHA256"), str)
            and isinstance(e.get("path"), str)]
    digest = _bts_sha256(core) if kept else None
    for e in kept:
        if e["COREDUMP_SHA256"] == digest:
            try:
                with open(os.path.join(e["path"], BTS_LBR_NOTE), "rb") as f:
                    notes.setdefault(f.read(), str(e.get("id")))
            except OSError:
                pass
    return notes


def _bts_companion_core(btsdump, core):
    """(a copy of core with the note btsdumpd's companion kept for it, the
    entry's id), or (None, why): why is None when no entry names this core."""
    notes = _bts_companion_notes(core)
    if len(notes) != 1:
        return None, (None if not notes else
                      "bts: %d of btsdumpd's entries (%s) name this core with "
                      "different notes: none shown" % (len(notes),
                                                       ", ".join(sorted(notes.values()))))
    (note, entry), = notes.items()
    tmp = tempfile.mkdtemp(prefix="bts-companion-")
    atexit.register(shutil.rmtree, tmp, True)
    with open(os.path.join(tmp, BTS_LBR_NOTE), "wb") as f:
        f.write(note)
    copy = os.path.join(tmp, "core")
    p = subprocess.run([btsdump, "add-note", "--framed", "-o", copy, core,
                        os.path.join(tmp, BTS_LBR_NOTE)],
                       capture_output=True, text=True, errors="replace")
    if p.returncode:
        return None, "bts: btsdumpd's entry %s: %s" % (entry, p.stderr.strip())
    return copy, entry


def _bts_plain_path(path):
    """PATH, or a symlink to it in a temporary directory when PATH needs
    escaping: gdb's commands take text only, and gdb echoes a remote
    target's command line to the terminal."""
    if _bts_escape(path) == path:
        return path
    tmp = tempfile.mkdtemp(prefix="bts-core-")
    atexit.register(shutil.rmtree, tmp, True)
    link = os.path.join(tmp, "core")
    os.symlink(path, link)
    return link


def _bts_decode(btsdump, core, exe):
    """btsdump's JSON of core, else of a copy with the companion's note;
    data["_core"] is the core decoded."""
    data, err = _bts_run_btsdump(btsdump, core, exe)
    if err == BTS_NO_TRACE:
        copy, entry = _bts_companion_core(btsdump, core)
        if copy:
            data, err = _bts_run_btsdump(btsdump, copy, exe)
            core = copy
            if data is not None:
                gdb.write("bts: the last branches kept by btsdumpd's companion in "
                          "its entry %s (LBR collector), for this core\n" % entry)
        elif entry:
            err = entry
    if data is not None:
        data["_btsdump"] = btsdump
        data["_core"] = core
    return data, err


def _bts_load():
    """(core key, btsdump's JSON) for the current inferior's core."""
    core = _bts_core_path()
    if not core:
        raise gdb.GdbError(BTS_NO_CORE)
    try:
        st = os.stat(core)
    except OSError as e:
        raise gdb.GdbError("bts: %s: %s" % (_bts_escape(core), e.strerror))
    btsdump = _bts_find_btsdump()
    exe = gdb.current_progspace().filename
    key = (os.path.realpath(core), st.st_mtime_ns, st.st_size, exe, btsdump)
    if key not in _BtsCache.entries:
        _BtsCache.entries[key] = _bts_decode(btsdump, core, exe)
    data, err = _BtsCache.entries[key]
    if err == BTS_NO_TRACE:
        raise _BtsNothing(err)
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
    raise _BtsNothing("bts: thread %d (LWP %d) has no branch trace in this "
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


def _bts_window(arg, total, last_shown, page=BTS_DEFAULT_COUNT,
                noun="branch trace"):
    """The 1-based inclusive range that ARG picks out of TOTAL entries.
    "-": the page before LAST_SHOWN, "" too when LAST_SHOWN is set (the
    newest page when not); "+": the page after; "N": the newest N;
    "FIRST,LAST", "FIRST,", ",LAST": that range, a page from FIRST, a
    page up to LAST."""
    if arg in ("", "-"):
        if last_shown is None:
            return max(1, total - page + 1), total
        if last_shown[0] <= 1:
            raise gdb.GdbError("bts: at the start of the %s" % noun)
        return max(1, last_shown[0] - page), last_shown[0] - 1
    if arg == "+":
        if last_shown is None or last_shown[1] >= total:
            raise gdb.GdbError("bts: at the end of the %s" % noun)
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


def _bts_pick(key, tid, what, arg, mods, total, page=BTS_DEFAULT_COUNT,
              noun="branch trace"):
    """_bts_window() with paging state per core, thread and command: "-"
    and "+" page from the last range shown; no argument pages back only
    after a paging command with the same modifiers (gdb repeats a command
    on Enter), else it shows the newest page."""
    if total == 0:
        raise _BtsNothing("bts: the trace of LWP %d is empty" % tid)
    paging = arg in ("", "-", "+")
    state = _BtsCache.windows.get((key, tid, what))
    last = state[0] if state else None
    if arg == "" and (not state or not state[1] or state[2] != mods):
        last = None
    win = _bts_window(arg, total, last, page, noun)
    _BtsCache.windows[(key, tid, what)] = (win, paging, mods)
    return win


# ---- gdb's own symbols and source lines ------------------------------------

def _bts_symoff(addr):
    """gdb's `symbol+offset` for ADDR, as in `x/i` and `info symbol`: full and
    minimal symbols, PIE, shared libraries and separate debuginfo resolved
    the way gdb resolves them; "" when gdb knows no symbol there."""
    s = gdb.format_address(addr)
    i = s.find(" <")
    return s[i + 2:-1] if i >= 0 and s.endswith(">") else ""


def _bts_function(addr):
    """The name of the function at ADDR (debug info first, then the
    minimal symbol), "??" when gdb knows none."""
    try:
        block = gdb.block_for_pc(addr)
    except RuntimeError:
        block = None
    while block is not None and block.function is None:
        block = block.superblock
    if block is not None:
        return block.function.print_name
    return re.sub(r"\+\d+$", "", _bts_symoff(addr)) or "??"


def _bts_line(addr):
    """(symtab, line) gdb finds for ADDR, or (None, 0)."""
    try:
        sal = gdb.find_pc_line(addr)
    except RuntimeError:
        return None, 0
    if sal.symtab is None or not sal.line:
        return None, 0
    return sal.symtab, sal.line


def _bts_source_text(symtab, line, cache):
    """Line LINE of SYMTAB's source, as gdb would list it; None when the
    file cannot be read (here or in gdb's `directory` path)."""
    name = symtab.filename
    if name not in cache:
        cands = [symtab.fullname(), name]
        dirs = gdb.parameter("directories") or ""
        cands += [os.path.join(d, os.path.basename(name))
                  for d in dirs.split(os.pathsep) if d and not d.startswith("$")]
        cache[name] = None
        for c in cands:
            try:
                with open(c, errors="replace") as f:
                    cache[name] = f.read().splitlines()
                break
            except OSError:
                continue
    text = cache[name]
    return text[line - 1] if text is not None and 0 < line <= len(text) else None


# ---- instructions between the branches ---------------------------------------

# Instruction prefixes the disassembler prints before the mnemonic.
_BTS_PREFIXES = {"bnd", "notrack", "rep", "repz", "repe", "repnz", "repne",
                 "lock", "data16", "data32", "addr16", "addr32", "cs", "ds",
                 "es", "fs", "gs", "ss", "rex", "rex.w", "{disp32}", "{disp8}"}


def _bts_mnemonic(asm):
    for w in asm.split():
        if w.lower() not in _BTS_PREFIXES:
            return w.lower()
    return ""


def _bts_leaves(m):
    """Whether an instruction with mnemonic M always transfers control (so
    the trace would have recorded it): jmp, call, ret and their far forms,
    iret, ud2, hlt."""
    return (m.startswith(("jmp", "ljmp", "call", "lcall", "ret", "lret",
                          "iret", "sysret", "sysexit"))
            or m in ("ud2", "hlt"))


def _bts_is_kind(m, kind):
    """Whether mnemonic M can be a branch btsdump classified as KIND; None
    when KIND says nothing about the instruction (interrupts, markers)."""
    if kind == "call":
        return m.startswith(("call", "lcall"))
    if kind == "return":
        return m.startswith(("ret", "lret"))
    if kind == "jump":
        return m.startswith(("jmp", "ljmp"))
    if kind == "cond":
        return m.startswith(("j", "loop")) and not m.startswith("jmp")
    return None


def _bts_straight(ds):
    """DS (disassembled instructions) up to and including the first that
    always leaves the straight path; all of DS when none does."""
    for i, d in enumerate(ds):
        if _bts_leaves(_bts_mnemonic(d["asm"])):
            return ds[:i + 1]
    return ds


class _BtsInsn:
    """One instruction of the rebuilt history: its address and length, the
    disassembler's text, or why the code could not be read."""
    __slots__ = ("addr", "length", "asm", "error")

    def __init__(self, addr, length=0, asm=None, error=None):
        self.addr, self.length, self.asm, self.error = addr, length, asm, error

    @classmethod
    def of(cls, d):
        """From one of Architecture.disassemble()'s dicts."""
        return cls(d["addr"], d["length"], d["asm"])


class _BtsInsns:
    """The selected thread's instructions, oldest first: from the first
    recorded branch instruction, along every straight run of code between
    one branch's target and the next branch, to the thread's pc in the core.
    notes[i]: lines printed before instruction i (0-based), where the run
    broke off (a gap, a switch, code that does not lead to the next branch).
    at_branch[j]: the number (1-based) of branch j's instruction."""

    def __init__(self):
        self.insns = []
        self.notes = {}
        self.at_branch = {}
        self.current = False    # the last instruction is the thread's pc
        self.broken = 0         # runs that did not match the code
        # each stretch of code is disassembled once: a loop's body comes
        # back thousands of times in a ring (bench/README.md)
        self._ones = {}         # addr -> _BtsInsn
        self._runs = {}         # (start, end) -> ([_BtsInsn], why or None)

    def note(self, text):
        self.notes.setdefault(len(self.insns), []).append(text)

    def _one(self, arch, addr):
        i = self._ones.get(addr)
        if i is None:
            try:
                i = _BtsInsn.of(arch.disassemble(addr)[0])
            except gdb.MemoryError as e:
                i = _BtsInsn(addr, error=str(e))
            self._ones[addr] = i
        return i

    def one(self, arch, addr):
        self.insns.append(self._one(arch, addr))

    def run(self, arch, start, end):
        """Appends the instructions from START to END (both included) when
        the code leads there without a transfer the trace would have
        recorded; else returns the -- line that says why not, and appends
        only the instructions that did run (up to a syscall) or none."""
        k = (start, end)
        if k not in self._runs:
            self._runs[k] = self._walk(arch, start, end)
        insns, why = self._runs[k]
        self.insns += insns
        return why

    def _walk(self, arch, start, end):
        """run()'s work for one stretch: (instructions, why or None)."""
        if start == end:
            return [self._one(arch, end)], None
        if end < start or end - start > BTS_MAX_RUN_BYTES:
            why = "no straight path"
            try:
                path = _bts_straight(arch.disassemble(start, count=4096))
            except gdb.MemoryError:
                path = []
        else:
            try:
                ds = arch.disassemble(start, end)
            except gdb.MemoryError as e:
                return [], ("-- cannot read the code from 0x%x to the branch at "
                            "0x%x (%s); for a core from another machine, `set "
                            "sysroot` before loading it --" % (start, end, e))
            path = _bts_straight(ds)    # the branch at END may leave
            leaves = path[-1] if len(path) < len(ds) else None
            if not ds or ds[-1]["addr"] != end:
                why = "the code from there steps over 0x%x" % end
            elif leaves:
                why = "%s at 0x%x leaves the path" % (
                    _bts_mnemonic(leaves["asm"]), leaves["addr"])
            else:
                return [_BtsInsn.of(d) for d in ds], None
        # A syscall on the way: the kernel may have resumed the thread
        # elsewhere (a signal handler, sigreturn), which BTS does not
        # record.  The path up to the syscall did run.
        for i, d in enumerate(path):
            if _bts_mnemonic(d["asm"]) in ("syscall", "sysenter"):
                return [_BtsInsn.of(x) for x in path[:i + 1]], (
                    "-- the kernel took over at the syscall at 0x%x and "
                    "resumed the thread elsewhere (a signal handler, "
                    "sigreturn): the way on is not in the trace --" % d["addr"])
        return [], ("-- 0x%x does not lead to the branch at 0x%x (%s): a "
                    "transfer the trace did not see, or code that differs "
                    "from the traced --" % (start, end, why))


def _bts_marker_line(b):
    ts = b.get("timestamp_ns", 0)
    when = "%d.%09ds" % (ts // 1000000000, ts % 1000000000)
    if b.get("marker") == "gap":
        return "-- gap (%s), resumed at %s after %d ns --" % (
            b.get("reason"), when, b.get("gap_ns", 0))
    return "-- %s cpu %d at %s --" % (b.get("marker"), b.get("cpu", 0), when)


def _bts_current_pc():
    """The thread's pc in the core, also while gdb's record (bts target)
    replays an earlier point."""
    try:
        rec = gdb.current_recording()
        if (rec is not None and rec.method == "btrace"
                and rec.replay_position is not None):
            return rec.end.pc
        return gdb.newest_frame().pc()
    except gdb.error:
        return None


def _bts_rebuild(t, arch, pc):
    """_BtsInsns for trace T (btsdump's JSON thread), with ARCH's
    disassembler and PC the thread's pc in the core (None if unknown)."""
    h = _BtsInsns()
    here = None             # where execution went after the last branch
    tr = t["trace"]
    if tr["wrapped"] or tr["lost"]:
        h.note("-- older instructions are gone (%s%d branches lost%s) --" % (
            "" if tr["lost_exact"] else ">=", tr["lost"],
            ", the ring wrapped" if tr["wrapped"] else ""))
    for b in t["branches"]:
        if b["kind"] == "marker":
            h.note(_bts_marker_line(b))
            if b.get("marker") == "gap":
                here = None
            continue
        frm, to = int(b["from"], 16), int(b["to"], 16)
        if here is not None:
            why = h.run(arch, here, frm)
            if why:
                h.broken += 1
                h.note(why)
                here = None
        if here is None:
            h.one(arch, frm)
        last = h.insns[-1]
        if last.asm is not None:
            ok = _bts_is_kind(_bts_mnemonic(last.asm), b["kind"])
            if ok is False:
                h.broken += 1
                h.note("-- branch %d is a %s, but the code at 0x%x is `%s`: "
                       "it differs from the traced (for a core from another "
                       "machine, `set sysroot` before loading it) --"
                       % (b["number"], b["kind"], frm, last.asm))
        h.at_branch[b["number"]] = len(h.insns)
        if b.get("inferred"):
            h.note("-- branch %d inferred from the core: the %s was not "
                   "recorded --" % (b["number"], b["kind"]))
        here = to
    if pc is None:
        if here is not None:
            h.one(arch, here)
        return h
    if here is not None and h.run(arch, here, pc) is None:
        h.current = True
        return h
    if here is not None:
        h.one(arch, here)       # the last branch went there
    h.note("-- no trace from here to the thread's pc 0x%x --" % pc)
    h.one(arch, pc)
    h.current = True
    return h


def _bts_history(key, t):
    """The selected thread's _BtsInsns, built once per core, thread,
    disassembly flavor and sysroot (where gdb finds the code)."""
    ck = (key, t["tid"], gdb.parameter("disassembly-flavor"),
          gdb.parameter("sysroot"))
    if ck not in _BtsCache.insns:
        arch = gdb.selected_inferior().architecture()
        _BtsCache.insns[ck] = _bts_rebuild(t, arch, _bts_current_pc())
    return _BtsCache.insns[ck]


# ---- printing --------------------------------------------------------------

def _bts_at(addr):
    """0x%016x <symbol+offset>, the way gdb prints a code address."""
    s = _bts_symoff(addr)
    return "0x%016x%s" % (addr, " <%s>" % s if s else "")


def _bts_branch_line(b, width, symw, mods):
    num = "%*d  " % (width, b["number"])
    if b["kind"] == "marker":
        return num + _bts_marker_line(b)
    frm, to = int(b["from"], 16), int(b["to"], 16)
    # "call*", "jump*": indirect, as btsdump marks them
    kind = b["kind"] + ("*" if b.get("indirect") else "")
    line = "%s%-*s " % (num, BTS_KIND_WIDTH, kind)
    # not recorded: marked so in every form, /r's too
    inferred = "  (inferred: %s not recorded)" % b["kind"] if b.get("inferred") else ""
    if "r" in mods:
        return line + "0x%016x => 0x%016x" % (frm, to) + inferred
    line += "%-*s => %s" % (symw, _bts_at(frm), _bts_at(to))
    if "s" in mods:
        ends = []
        for a in (frm, to):
            st, ln = _bts_line(a)
            ends.append("%s:%d" % (st.filename, ln) if st else "?")
        if ends != ["?", "?"]:
            line += "  [%s -> %s]" % tuple(ends)
    if b.get("smashed_stack"):
        line += "  <- smashed stack? no call returns here"
    return line + inferred


def _bts_branch_what(b):
    """'indirect call in dispatch', as btsdump's fault line says it."""
    frm = int(b["from"], 16)
    fn = _bts_function(frm)
    where = ("in " + fn) if fn != "??" else ("at " + (_bts_symoff(frm) or "0x%x" % frm))
    return "%s%s %s" % ("indirect " if b.get("indirect") else "", b["kind"], where)


def _bts_fault_line(t):
    """btsdump's fault line (docs/btsdump.md), with gdb's symbols: how the
    thread's pc at the fault relates to the newest branch of its trail."""
    f = t.get("fault")
    if not f:
        return None
    pc = int(f["pc"], 16)
    s = _bts_symoff(pc)
    line = "faulted at 0x%x%s" % (pc, " <%s>" % s if s else "")
    rel = f.get("relation")
    byno = {b["number"]: b for b in t["branches"]}
    b = byno.get(f.get("branch"))
    if rel == "target" and b:
        line += " = target of #%d (%s%s)" % (b["number"], _bts_branch_what(b),
                                             ", inferred" if f.get("inferred") else "")
    elif rel == "run" and b:
        line += " = 0x%x bytes into the straight-line run after #%d (%s)" % (
            f.get("run_bytes", 0), b["number"], _bts_branch_what(b))
    elif rel == "unrelated" and b:
        line += ": not reached by straight-line code from the target of #%d (%s)" % (
            b["number"], _bts_branch_what(b))
    elif rel == "unknown" and b:
        line += ": the code after the target of #%d cannot be read to relate it (%s)" % (
            b["number"], _bts_branch_what(b))
    else:
        line += ": no branch in the trace to tie it to"
    addr = f.get("address")
    if addr is not None and int(addr, 16) != pc:
        line += "; fault address %s" % addr
    return line


def _bts_list(arg):
    mods, arg = _bts_modifiers(arg, "rs")
    key, t = _bts_selected_trace()
    branches = t["branches"]
    first, last = _bts_pick(key, t["tid"], "list", arg, mods,
                            len(branches))
    shown = branches[first - 1:last]
    width = len(str(len(branches)))
    symw = min(18 + BTS_SYMBOL_WIDTH, max(
        [len(_bts_at(int(b["from"], 16)))
         for b in shown if b["kind"] != "marker"] or [0]))
    trace = t["trace"]
    if first == 1 and (trace["wrapped"] or trace["lost"]):
        gdb.write("%*s  -- older branches are gone (%s%d lost%s) --\n" % (
            width, "", "" if trace["lost_exact"] else ">=", trace["lost"],
            ", the ring wrapped" if trace["wrapped"] else ""))
    for b in shown:
        gdb.write(_bts_branch_line(b, width, symw, mods) + "\n")
    fault = _bts_fault_line(t) if last == len(branches) else None
    if fault:
        gdb.write("%*s  %s\n" % (width, "", fault))


def _bts_history_size(name):
    try:
        n = gdb.parameter("record %s-size" % name)
    except RuntimeError:
        n = None
    return n if isinstance(n, int) and n > 0 else BTS_DEFAULT_COUNT


def _bts_raw(addr, length):
    try:
        mem = gdb.selected_inferior().read_memory(addr, length).tobytes()
    except gdb.MemoryError:
        return "??"
    return " ".join("%02x" % c for c in mem)


def _bts_insns(arg):
    mods, arg = _bts_modifiers(arg, "mrf")
    key, t = _bts_selected_trace()
    h = _bts_history(key, t)
    total = len(h.insns)
    first, last = _bts_pick(key, t["tid"], "insns", arg, mods, total,
                            _bts_history_size("instruction-history"),
                            "instruction history")
    width = len(str(total))
    src, shown_line = {}, None
    # a ring repeats its loops: each address is named once, and the lines
    # go to gdb a batch at a time (bench/README.md, gdb-bench.py)
    at, out = {}, []
    for i in range(first - 1, last):
        if len(out) >= 512:
            gdb.write("".join(out))
            out = []
        for n in h.notes.get(i, ()):
            out.append("%*s\t%s\n" % (width, "", n))
        ins = h.insns[i]
        if "m" in mods:
            st, ln = _bts_line(ins.addr)
            if st is not None and (st.filename, ln) != shown_line:
                text = _bts_source_text(st, ln, src)
                out.append("%d\t%s\n" % (ln, text if text is not None
                                         else "in " + st.filename))
            shown_line = (st.filename, ln) if st is not None else None
        cur = "=> " if h.current and i == total - 1 else "   "
        if "f" in mods:
            where = "0x%016x" % ins.addr
        elif ins.addr in at:
            where = at[ins.addr]
        else:
            where = at[ins.addr] = _bts_at(ins.addr)
        if ins.asm is None:
            body = "<%s>" % ins.error
        elif "r" in mods:
            body = "%s\t%s" % (_bts_raw(ins.addr, ins.length), ins.asm)
        else:
            body = ins.asm
        out.append("%*d\t%s%s:\t%s\n" % (width, i + 1, cur, where, body))
    if last == total:
        for n in h.notes.get(total, ()):
            out.append("%*s\t%s\n" % (width, "", n))
    gdb.write("".join(out))


def _bts_segment_insns(h, segs, k):
    """Instruction numbers (first, last) of call segment K, or None."""
    if not h.insns:
        return None
    if k == 0:
        first = 1
    else:
        prev = h.at_branch.get(segs[k - 1]["last_branch"])
        if prev is None:
            return None
        first = prev + 1
    lb = segs[k]["last_branch"]
    last = len(h.insns) if lb is None else h.at_branch.get(lb)
    if last is None or last < first:
        return None
    return first, last


def _bts_segment_lines(h, rng, s):
    """` at FILE:FIRST,LAST` for a call segment: the lines gdb finds for its
    instructions in the file of its first; btsdump's when none are known."""
    if rng:
        name, lo, hi = None, None, None
        for ins in h.insns[rng[0] - 1:rng[1]]:
            st, ln = _bts_line(ins.addr)
            if st is None or (name is not None and st.filename != name):
                continue
            name = st.filename
            lo = ln if lo is None else min(lo, ln)
            hi = ln if hi is None else max(hi, ln)
        if name:
            return "%s:%s" % (name, lo if lo == hi else "%d,%d" % (lo, hi))
    if s.get("file"):
        return "%s:%s" % (_bts_escape(s["file"]), s["line_min"] if s["line_min"] ==
                          s["line_max"] else "%d,%d" % (s["line_min"],
                                                        s["line_max"]))
    return None


def _bts_calls(arg):
    mods, arg = _bts_modifiers(arg, "cil")
    key, t = _bts_selected_trace()
    segs = t.get("calls") or []
    first, last = _bts_pick(key, t["tid"], "calls", arg, mods, len(segs),
                            _bts_history_size("function-call-history"),
                            "function call history")
    h = _bts_history(key, t) if mods & {"i", "l"} else None
    width = len(str(len(segs)))
    for k in range(first - 1, last):
        s = segs[k]
        line = "%*d\t%s%s" % (width, k + 1, "  " * s["depth"] if "c" in mods
                              else "", _bts_function(int(s["address"], 16)))
        rng = _bts_segment_insns(h, segs, k) if h else None
        if "i" in mods and rng:
            line += "\tinst %d,%d" % rng
        if "l" in mods:
            where = _bts_segment_lines(h, rng, s)
            if where:
                line += "\tat " + where
        gdb.write(line + "\n")


def _bts_info():
    key, data = _bts_load()
    inferior = gdb.selected_inferior()
    by_lwp = {_bts_lwp(th): th for th in inferior.threads()}
    sel = gdb.selected_thread()
    gdb.write("Branch trace of %s (decoded by %s):\n"
              % (_bts_escape(key[0]), _bts_escape(data["_btsdump"])))
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
        gdb.write("rejected: %s\n" % _bts_escape(rej))


# ---- commands --------------------------------------------------------------

def _bts_do(fn, arg):
    try:
        fn(arg)
    except _BtsNothing as e:
        gdb.write("%s\n" % e)


class BtsPrefix(gdb.Command):
    """Show the branch trace that btscrash wrote into this core file.

Usage: bts list [/rs] [N | - | + | FIRST,LAST | FIRST, | ,LAST]
       bts branch-history ...            (the same as bts list)
       bts function-call-history [/cil] [N | - | + | FIRST,LAST | ...]
       bts instruction-history [/mrf] [N | - | + | FIRST,LAST | ...]
       bts target       (gdb's own record and reverse commands on the core)
       bts replay       (reverse execution with recovered values)
       bts why $REGISTER | ADDR[,SIZE] | EXPRESSION   (where a value came from)
       info bts

The commands act on the selected thread; use "thread apply all bts list 5"
for every thread.  Branches are numbered from 1 (the oldest kept) to the
newest, the one that led to the crash, exactly as btsdump numbers them.
"bts" alone is "bts list"."""

    def __init__(self):
        super().__init__("bts", gdb.COMMAND_SUPPORT, prefix=True)

    def invoke(self, arg, from_tty):
        _bts_do(_bts_list, arg)


_BTS_LIST_DOC = """Print the selected thread's last taken branches, oldest first.

Usage: bts list [/rs] [N | - | + | FIRST,LAST | FIRST, | ,LAST]
       bts branch-history ...

Without an argument, the newest ten branches; repeated (or on Enter), the
ten before those, and so on back to the start.  "-": the ten before the
last ones shown, "+": the ten after.
N: the newest N branches.  FIRST,LAST: branches FIRST to LAST; FIRST,:
ten from FIRST; ,LAST: ten up to LAST.
Each line: NUMBER KIND FROM <symbol+offset> => TO <symbol+offset>, symbols
as gdb resolves them.  KIND is call, return, jump, cond, syscall, sysret,
iret, interrupt or unknown; context switches and gaps print as
"-- switch-in cpu 0 at 1.000200000s --".
/r: raw addresses, no symbols.  /s: the source lines of both ends."""


class BtsList(gdb.Command):
    __doc__ = _BTS_LIST_DOC

    def __init__(self, name="bts list"):
        super().__init__(name, gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_do(_bts_list, arg)


class BtsBranchHistory(BtsList):
    __doc__ = _BTS_LIST_DOC

    def __init__(self):
        super().__init__("bts branch-history")


_BTS_CALLS_DOC = """Print the selected thread's calls and returns, one line per function.

Usage: bts function-call-history [/cil] [N | - | + | FIRST,LAST | FIRST, | ,LAST]
       bts calls ...

One line per stretch of the trace spent in one function, oldest first,
like "record function-call-history".  The arguments pick lines as for
"bts list" (default: the newest "record function-call-history-size"
lines, ten; repeated: the ones before).
/c: indent by call depth.  /i: the numbers of its instructions, as in
"bts instruction-history" (inst FIRST,LAST).  /l: the source lines of its
instructions (at FILE:FIRST,LAST)."""


class BtsFunctionCallHistory(gdb.Command):
    __doc__ = _BTS_CALLS_DOC

    def __init__(self, name="bts function-call-history"):
        super().__init__(name, gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_do(_bts_calls, arg)


class BtsCalls(BtsFunctionCallHistory):
    __doc__ = _BTS_CALLS_DOC

    def __init__(self):
        super().__init__("bts calls")


class BtsInstructionHistory(gdb.Command):
    """Print the instructions the selected thread executed, oldest first.

Usage: bts instruction-history [/mrf] [N | - | + | FIRST,LAST | FIRST, | ,LAST]

Like "record instruction-history": the instructions from the first
recorded branch to the thread's pc in the core ("=>"), rebuilt from the
branches and the code gdb reads (the core, the executable, the shared
libraries): between two recorded branches the code runs straight.  Where
it cannot (a gap, code that does not lead to the next branch, code that
cannot be read) a "--" line says so and the history goes on from the next
branch.  The arguments pick instructions as "bts list" picks branches
(default: the newest "record instruction-history-size", ten; repeated: the
ones before).
/m: source lines interleaved.  /r: raw instruction bytes.  /f: no
function names."""

    def __init__(self):
        super().__init__("bts instruction-history", gdb.COMMAND_SUPPORT,
                         gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_do(_bts_insns, arg)


class BtsTarget(gdb.Command):
    """Replay the core's branch trace with gdb's own record commands.

Usage: bts target

Swaps the core file for "btsdump gdbserver CORE EXECUTABLE", which serves
the same core through gdb's remote protocol as a stopped process whose
threads carry their recorded branch traces (Branch Trace Store format),
and starts gdb's "record btrace bts" on it; gdb's own commands then work:
record function-call-history, record instruction-history, record goto,
reverse-stepi, reverse-next, reverse-finish, and backtraces while
replaying.  gdb's "set record btrace bts buffer-size" (64 KiB by default;
"unlimited" for the whole ring) bounds the newest records served: set it
before "bts target".  Nothing runs: continuing past the end of the trace
is refused.
"detach" ends the session; "core-file CORE" goes back to the plain core."""

    def __init__(self):
        super().__init__("bts target", gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_do(lambda a: _bts_serve("bts target", a, from_tty), arg)


def _bts_serve(name, arg, from_tty):
    """Swaps the core for btsdump gdbserver on it: "bts target" starts
    gdb's btrace on it, "bts replay" serves reverse execution (--replay)."""
    if arg.strip():
        raise gdb.GdbError("bts: \"%s\" takes no arguments" % name)
    inferior = gdb.selected_inferior()
    if _bts_served(inferior):
        raise gdb.GdbError("bts: the core is served already (%s)" % name)
    orig = _bts_core_path()
    # no trace: nothing to replay, said as the other commands say it;
    # the companion's copy when it has the trace
    core = _bts_load()[1]["_core"]
    replay = name == "bts replay"
    cmd = [_bts_find_btsdump(), "gdbserver"] + (["--replay"] if replay else []) + \
        [_bts_plain_path(os.path.abspath(core))]
    exe = gdb.current_progspace().filename
    if exe:
        cmd.append(exe)
    gdb.execute("core-file", from_tty=False)
    gdb.execute("target remote | " + " ".join(shlex.quote(c) for c in cmd),
                from_tty=from_tty)
    conn = inferior.connection
    # the bts commands stay: they read the same core (docs/gdb.md)
    _BtsCache.served[inferior.num] = (orig, (conn.num, conn.details))
    if not replay and gdb.current_recording() is None:
        gdb.execute("record btrace bts", from_tty=from_tty)


class BtsReplay(gdb.Command):
    """Reverse-execute the core with the values recovered at each instruction.

Usage: bts replay

Swaps the core file for "btsdump gdbserver --replay CORE EXECUTABLE",
which serves reverse execution itself (as rr's server does): gdb's
reverse-stepi, reverse-step, reverse-next, reverse-finish and
reverse-continue move back along the thread's recorded instructions, and
stepi, next, continue forward again up to the crash.  At each point the
registers and memory are the ones value recovery proves (btsdump regs);
what it cannot prove is <unavailable>, never guessed, so "p", "info
locals", "bt" with arguments and "frame" show what is known.
Breakpoints and hardware watchpoints ("watch", "awatch", "rwatch") stop
in both directions, where the engine places the access.  The start of the trace is
"No more reverse-execution history".  There is no "record": the
record commands are "bts target"'s.  "detach" ends the session."""

    def __init__(self):
        super().__init__("bts replay", gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _bts_do(lambda a: _bts_serve("bts replay", a, from_tty), arg)


# ---- bts why: where a value came from (btsdump why --json) -----------------

BTSDUMP_EXIT_USAGE = 1
_BTS_WHY_MEM = re.compile(r"\*?(0[xX][0-9a-fA-F]+|[0-9]+)(,[0-9]+)?$")


def _bts_why_target(arg):
    """btsdump why's REGISTER or *ADDR,SIZE for ARG: $REG, a memory form
    (*ADDR, ADDR, ADDR,SIZE) as is, else a C expression gdb evaluates in
    the selected frame (the core's final state) to an object in memory."""
    a = arg.strip()
    if not a:
        raise gdb.GdbError("bts: usage: bts why $REGISTER | ADDR[,SIZE] | EXPRESSION")
    if a.startswith("$"):
        return a[1:], a
    if _BTS_WHY_MEM.match(a):
        return ("" if a.startswith("*") or "," in a else "*") + a, a
    try:
        v = gdb.parse_and_eval(a)
    except gdb.error as e:
        raise gdb.GdbError("bts: %s" % e)
    if v.address is None:
        raise gdb.GdbError("bts: %s is not in memory (a register's value?): "
                           "ask for the register, as in bts why $rdx" % a)
    size = v.type.sizeof
    if size not in (1, 2, 4, 8):
        raise gdb.GdbError("bts: %s is %d bytes: bts why follows 1, 2, 4 or 8"
                           % (a, size))
    return "*0x%x,%d" % (int(v.address), size), a


def _bts_why_value(v):
    """"rdx = 0x0", "[0x7ffc...] = 0xf", "3", as btsdump why prints them."""
    val = "unknown" if v.get("value") is None else v["value"]
    if v["kind"] == "immediate":
        return val
    if v["kind"] == "register":
        return "%s = %s" % (v["name"], val)
    if v.get("address") is None:
        return "[address unknown]/%d" % v["size"]
    if v.get("value") is not None and v["known"] != "0x%x" % ((1 << 8 * v["size"]) - 1):
        val += " (known bits %s)" % v["known"]
    sym = _bts_symoff(int(v["address"], 16))     # gdb's name of the object
    return "[%s%s]/%d = %s" % (v["address"], " " + sym if sym else "", v["size"], val)


_BTS_WHY_FROM = {
    "before-trace": ("held since before the trace began",
                     "a slot the trace never wrote before here (the core's value, "
                     "or proven by a load)"),
    "syscall": ("the kernel, at the syscall",) * 2,
    "gap": ("code the trace does not show (a gap)",) * 2,
    "alias": ("may have been written by (a store at an address not known, "
              "or not modelled)",) * 2,
    "not-followed": ("memory another thread may write: not followed",) * 2,
}


def _bts_why_line(s):
    what = _bts_why_value(s["what"])
    mem = s["what"]["kind"] == "memory"
    i = s["instruction"]
    if i is None:
        return "%s <- %s" % (what, _BTS_WHY_FROM[s["from"]][mem])
    how = "" if s["from"] == "instruction" else _BTS_WHY_FROM[s["from"]][mem]
    if i.get("address") is None:
        return "%s <- %s [back %d]" % (what, how, i["back"])
    addr = int(i["address"], 16)
    where = _bts_symoff(addr) or i["address"]
    symtab, line = _bts_line(addr)
    if symtab is not None:
        where += " (%s:%d)" % (os.path.basename(symtab.filename), line)
    text = i.get("text") or ""
    return "%s <- %s%s%s in %s [back %d]%s" % (
        what, how, ": " if how and text else "", text, where, i["back"],
        " (maybe: it may not have written it)" if s["maybe"] else "")


_BTS_WHERE = re.compile(r"thread (\d+) back (\d+)$")


def _bts_replay_back(tid):
    """Instructions before the fault of `btsdump gdbserver --replay`'s
    point in thread tid (its `monitor bts-where`); 0 on any other target
    (a core, the stub's plain mode) or thread."""
    try:
        out = gdb.execute("monitor bts-where", to_string=True)
    except gdb.error:
        return 0
    m = _BTS_WHERE.match(out.strip())
    return int(m.group(2)) if m and int(m.group(1)) == tid else 0


def _bts_why(arg):
    target, shown = _bts_why_target(arg)
    _, t = _bts_selected_trace()
    key, data = _bts_load()
    back = _bts_replay_back(t["tid"])
    cmd = [data["_btsdump"], "why", "--json", "--thread", str(t["tid"]),
           "--back", str(back), data["_core"]]
    exe = gdb.current_progspace().filename
    if exe and os.path.exists(exe):
        cmd.append(exe)
    cmd.append(target)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise gdb.GdbError("bts: cannot run %s: %s" % (_bts_escape(cmd[0]), e.strerror))
    if p.returncode == BTSDUMP_EXIT_NO_TRACE:
        raise _BtsNothing(BTS_NO_TRACE)
    if p.returncode == BTSDUMP_EXIT_USAGE:
        raise gdb.GdbError("bts: %s: not a register nor an address" % _bts_escape(shown))
    if p.returncode not in (0, 7):
        raise gdb.GdbError("bts: btsdump why failed (exit %d): %s"
                           % (p.returncode, _bts_escape(p.stderr.strip())))
    try:
        w = json.loads(p.stdout)
    except ValueError as e:
        raise gdb.GdbError("bts: btsdump why printed no valid JSON: %s" % e)
    if (w.get("schema"), w.get("version")) != ("btscrash-why", BTS_JSON_VERSION):
        raise gdb.GdbError("bts: btsdump why writes JSON schema %s version %s, this "
                           "gdb/bts.py reads btscrash-why version %d: use the btsdump "
                           "of the same build" % (w.get("schema"), w.get("version"),
                                                  BTS_JSON_VERSION))
    gdb.write("%s, %s (%d instructions traced):\n"
              % (_bts_escape(shown), "%d instructions before the fault (the replay "
                 "point)" % back if back else "at the fault", w["instructions"]))
    steps = w["chain"]

    def tree(k):
        s = steps[k]
        ind = "  " * s["depth"]
        gdb.write("%s%s\n" % (ind, _bts_escape(_bts_why_line(s))))
        if s["operands"] and s["instruction"] is not None:
            gdb.write("%s    read %s\n" % (ind, _bts_escape(
                ", ".join(_bts_why_value(o) for o in s["operands"]))))
        for c in range(k + 1, len(steps)):
            if steps[c]["parent"] == k:
                tree(c)
    if steps:
        tree(0)
    if w["truncated"]:
        gdb.write("(more links not shown)\n")


class BtsWhy(gdb.Command):
    """Show where a value of the fault's state (or the replay point's) came from.

Usage: bts why $REGISTER | ADDR | ADDR,SIZE | EXPRESSION

The instruction that last wrote the value before the fault, where it is
(symbol+offset and source line, gdb's), the operands it read with their
values recovered from the core and the trace ("unknown" where they cannot
be proven), then where those came from, newest first: a load names the
store that wrote its memory, or says the trace never wrote it.
EXPRESSION is evaluated by gdb in the selected frame, as the core holds it,
to an object in memory of 1, 2, 4 or 8 bytes (p &EXPRESSION): a local
that gdb says lives in a register is asked for by the register.
The selected thread's trace; btsdump why --json does the work.  Under
`bts replay` the value is the one at the replay point, not the fault's."""

    def __init__(self):
        super().__init__("bts why", gdb.COMMAND_SUPPORT, gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        _bts_do(_bts_why, arg)


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
        _bts_do(lambda _: _bts_info(), arg)


BtsPrefix()
BtsList()
BtsBranchHistory()
BtsFunctionCallHistory()
BtsCalls()
BtsInstructionHistory()
BtsTarget()
BtsReplay()
BtsWhy()
InfoBts()
