# SPDX-License-Identifier: GPL-2.0-or-later
# The truth for value recovery (tests/test-recover.py): a copy of
# fixtures/gdb-record-branches.py that also logs every register before each
# instruction it single-steps.  Records the taken branches of a program
# from main until a signal stops it, then writes a core:
#   gdb -batch -x gdb-record-regs.py  with $BTS_RECORDS ("FROM TO" lines,
#   for `btsdump add-note`) and $BTS_CORE set; $BTS_RECORDS.regs gets one
#   line per instruction stepped (a `rep` instruction once), the thread's
#   state at the end last: "PC NAME=VALUE ... mem=ADDR:BYTES" in hex, the
#   memory from 64 bytes below rsp to 64 above ("??" where unreadable).
#   With $BTS_START=FUNCTION the recording starts there instead of main,
#   in the thread that reaches it, the others held (a worker thread).
import os
import gdb

records_path = os.environ["BTS_RECORDS"]
core_path = os.environ["BTS_CORE"]
stopped_by_signal = []
REGS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
        "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags"]


def on_stop(event):
    if isinstance(event, gdb.SignalEvent) and event.stop_signal != "SIGTRAP":
        stopped_by_signal.append(event.stop_signal)


def pc():
    return int(gdb.parse_and_eval("$pc")) & (2**64 - 1)


def regs():
    f = gdb.selected_frame()
    text = " ".join("%s=%x" % (r, int(f.read_register(r)) & (2**64 - 1))
                    for r in REGS)
    lo = (int(f.read_register("rsp")) & (2**64 - 1)) - 64
    mem = []
    for a in range(lo, lo + 128):
        try:
            mem.append("%02x" % gdb.selected_inferior().read_memory(a, 1).tobytes()[0])
        except gdb.MemoryError:
            mem.append("??")
    return text + " mem=%x:%s" % (lo, "".join(mem))


def always_branches(asm):
    """jmp, call, ret, iret: taken even onto the next instruction, as BTS
    records them (fixtures/gdb-record-branches.py)."""
    words = [w for w in asm.split() if w not in ("bnd", "notrack", "rep", "repz")]
    m = words[0] if words else ""
    return m.startswith(("jmp", "ljmp", "call", "lcall", "ret", "lret", "iret"))


def record(limit=200000):
    """Single-steps the thread until a signal stops it: its taken branches
    and the state before each instruction, the state at the end last."""
    arch = gdb.selected_frame().architecture()
    recs, states = [], []
    for _ in range(limit):
        here = pc()
        if not states or states[-1][0] != here or (states[-1][0], here) in recs[-1:]:
            states.append((here, regs()))  # a rep iteration stays put: once
        try:
            insn = arch.disassemble(here)[0]
            length, always = insn["length"], always_branches(insn["asm"])
        except gdb.MemoryError:
            length, always = 0, False
        gdb.execute("stepi", to_string=True)
        there = pc()
        if stopped_by_signal:
            if there != states[-1][0]:
                states.append((there, regs()))
            return recs, states
        if always or (there != here and there != here + length):
            recs.append((here, there))
    raise gdb.GdbError("no signal after %d steps" % limit)


gdb.execute("set pagination off")
gdb.execute("set confirm off")
start = os.environ.get("BTS_START", "main")
gdb.execute("break " + start)
gdb.execute("run")
if start != "main":
    gdb.execute("set scheduler-locking on")
gdb.events.stop.connect(on_stop)
recs, states = record()
with open(records_path, "w") as f:
    f.write("# taken branches recorded by single-stepping in gdb\n")
    f.write("# tid %d\n" % gdb.selected_thread().ptid[1])
    for frm, to in recs:
        f.write("0x%x 0x%x\n" % (frm, to))
with open(records_path + ".regs", "w") as f:
    for here, r in states:
        f.write("%x %s\n" % (here, r))
gdb.execute("generate-core-file " + core_path)
