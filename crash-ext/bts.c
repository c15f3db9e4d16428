// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * crash extension: `bts`, the last branches of each CPU (and of a traced
 * task) from a vmcore of a btscrash kernel.  Finds everything through the
 * VMCOREINFO keys of docs/format.md §4 (BTS_CRASH_TABLE_PA, SIZE/OFFSET of
 * bts_crash_ring, OFFSET(task_struct.bts_crash)); the table, descriptors
 * and ring order are decoded by lib/format.c, the library's own decoder;
 * a kernel ring is decoded against crash's vmlinux (lib/decode.c: kinds,
 * DWARF lines) and printed by report-text.c, the lines of `btsdump vmcore
 * VMCORE vmlinux`; -r and a task's user ring print through lib/ringtext.c
 * with crash's own symbols.  The library is linked into this module.
 *   crash> extend bts.so
 *   crash> bts [-c CPU[,CPU...]] [-n N] [-r] [-t PID|TASK]
 */
#include "defs.h"		/* crash's: the release BTS_CRASH_FOR names */
#include <stdint.h>
#include <string.h>

#include "btsdec.h"	/* lib/decode.c, report.c: a ring decoded and printed */
#include "escape.h"	/* lib/escape.c: a task's comm shown escaped */
#include "format.h"	/* lib/format.c: the one decoder of the format */
#include "ringtext.h"	/* lib/ringtext.c: the text of a ring, as btsdump prints it */

/* What VMCOREINFO says about the rings, looked up once per session. */
static struct {
	struct btsdec_ring_layout layout;
	uint64_t table_pa;
	long task_bts_crash;
	int ok;
} bts_layout;

/* format.c's callbacks: VMCOREINFO through crash, memory through readmem()
 * in the address space *ctx names (PHYSADDR or KVADDR). */
static bool crash_info(void *ctx, const char *key, char *buf, size_t len)
{
	char *s = pc->read_vmcoreinfo ? pc->read_vmcoreinfo(key) : NULL;

	if (!s)
		return false;
	snprintf(buf, len, "%s", s);
	free(s);
	return true;
}

static int crash_read(void *ctx, uint64_t addr, void *buf, size_t len,
		      struct btsdec_err *err)
{
	int memtype = *(const int *)ctx;

	if (!readmem(addr, memtype, buf, len, "btscrash", RETURN_ON_ERROR | QUIET))
		return btsdec_fail(err, -ENOENT, "%s address %llx not in dump: filtered or truncated",
				   memtype == PHYSADDR ? "physical" : "virtual",
				   (ulonglong)addr);
	return 0;
}

static int phys = PHYSADDR, kvaddr = KVADDR;

static int bts_layout_init(void)
{
	struct btsdec_err err;
	uint64_t off;
	int ret;

	if (bts_layout.ok)
		return TRUE;
	ret = btsdec_vmcoreinfo_rings(crash_info, NULL, &bts_layout.table_pa,
				      &bts_layout.layout, &err);
	if (ret == -ENOENT) {
		error(INFO, "this kernel keeps no branch traces (%s)\n", err.msg);
		return FALSE;
	}
	if (ret) {
		error(INFO, "%s\n", err.msg);
		return FALSE;
	}
	bts_layout.task_bts_crash = MEMBER_OFFSET("task_struct", "bts_crash");
	if (bts_layout.task_bts_crash < 0 &&
	    btsdec_info_u64(crash_info, NULL, "OFFSET(task_struct.bts_crash)", 10, &off))
		bts_layout.task_bts_crash = off;
	bts_layout.ok = TRUE;
	return TRUE;
}

/* Reads and checks a ring descriptor; what = "CPU 3" or "PID 12 ...". */
static int read_ring(ulonglong addr, int *memtype, const char *what,
		     struct bts_crash_ring *r)
{
	struct btsdec_err err;

	if (btsdec_ring_desc_load(crash_read, memtype, &bts_layout.layout, addr, r, &err)) {
		error(INFO, "%s: ring descriptor at %llx: %s\n", what, addr, err.msg);
		return FALSE;
	}
	return TRUE;
}

/* The traced task's executable: its code range and file name, for -t. */
static struct {
	ulong start, end;
	char name[64];
} bts_exe;

static ulong read_ptr(ulong addr, long off)
{
	ulong v = 0;

	if (!addr || off < 0 || !readmem(addr + off, KVADDR, &v, sizeof(v), "pointer",
					 RETURN_ON_ERROR | QUIET))
		return 0;
	return v;
}

/*
 * task->mm: start_code/end_code and exe_file's name.  crash 8.0.2 cannot
 * walk 6.1's maple-tree VMAs, so only the executable's text is named.
 */
static void bts_exe_init(ulong task)
{
	ulong mm = read_ptr(task, MEMBER_OFFSET("task_struct", "mm"));
	ulong file = read_ptr(mm, MEMBER_OFFSET("mm_struct", "exe_file"));
	long path = MEMBER_OFFSET("file", "f_path"), dentry = MEMBER_OFFSET("path", "dentry");
	long d_name = MEMBER_OFFSET("dentry", "d_name"), qname = MEMBER_OFFSET("qstr", "name");
	ulong d, name;

	memset(&bts_exe, 0, sizeof(bts_exe));
	if (!mm)
		return;
	bts_exe.start = read_ptr(mm, MEMBER_OFFSET("mm_struct", "start_code"));
	bts_exe.end = read_ptr(mm, MEMBER_OFFSET("mm_struct", "end_code"));
	if (!file || path < 0 || dentry < 0 || d_name < 0 || qname < 0)
		return;
	d = read_ptr(file, path + dentry);
	name = read_ptr(d, d_name + qname);
	if (!name || !read_string(name, bts_exe.name, sizeof(bts_exe.name) - 1))
		bts_exe.name[0] = '\0';
}

/* The decoder of kernel rings: crash's vmlinux (pc->namelist) at the
 * dump's KASLR offset, as `btsdump vmcore VMCORE vmlinux` opens it; set
 * up at the first `bts`.  NULL sym: rings are printed undecoded. */
static struct {
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;
	int tried;
} bts_dec;

static int bts_decoder(void)
{
	struct btsdec_err err;
	uint64_t kaslr = 0;
	char buf[64];

	if (bts_dec.tried)
		return bts_dec.sym != NULL;
	bts_dec.tried = TRUE;
	if (crash_info(NULL, "KERNELOFFSET", buf, sizeof(buf)))
		kaslr = strtoull(buf, NULL, 16);
	if (btsdec_sym_open_kernel(pc->namelist, kaslr, NULL, &bts_dec.sym, &err) ||
	    btsdec_classifier_new(&bts_dec.cls, &err)) {
		error(INFO, "%s: %s: branches are shown undecoded\n", pc->namelist, err.msg);
		btsdec_sym_close(bts_dec.sym);
		bts_dec.sym = NULL;
		return FALSE;
	}
	return TRUE;
}

/* A kernel ring decoded and printed in btsdump vmcore's lines; FALSE if it
 * could not be decoded (then it is printed undecoded). */
static int print_decoded(const struct btsdec_ring_text *v, ulong n)
{
	struct btsdec_trace t = {
		.type = NT_BTSCRASH_CPU, .capacity = v->capacity, .source = v->source,
		.nr = v->nr, .recs = (struct btsdec_record *)v->recs,
	};
	struct btsdec_decoded d;
	struct btsdec_err err;

	if (!bts_decoder())
		return FALSE;
	if (btsdec_decode(bts_dec.sym, bts_dec.cls, &t, &d, &err)) {
		error(INFO, "%s: %s\n", v->what, err.msg);
		return FALSE;
	}
	btsdec_render_ring_decoded(fp, v, &d, n, false);
	btsdec_decoded_free(&d);
	return TRUE;
}

/* lib/ringtext.c's names: crash's kernel symbols, or for a task's user
 * branches "(exe)" inside its executable's text. */
static const char *crash_name(const void *ctx, uint64_t a, char *buf, size_t len)
{
	int user = *(const int *)ctx;
	struct syment *sp;
	ulong off = 0;

	if (!user && (sp = value_search(a, &off)))
		snprintf(buf, len, off ? "%s+0x%lx" : "%s", sp->name, off);
	else if (user && bts_exe.name[0] && a >= bts_exe.start && a < bts_exe.end)
		snprintf(buf, len, "(%s)", bts_exe.name);
	else
		return NULL;
	return buf;
}

/* The ring's newest n records (0: all), oldest first, printed by
 * lib/ringtext.c: the lines `btsdump vmcore` prints for the same ring. */
static void print_ring(const char *what, const struct bts_crash_ring *r, ulong n,
		       int raw, int user)
{
	struct btsdec_record *recs;
	struct btsdec_err err;
	size_t nr;
	bool wrapped;

	if (btsdec_ring_records(crash_read, &phys, r, UINT64_MAX, &recs, &nr,
				&wrapped, &err)) {
		error(INFO, "%s: records at physical %llx: %s\n", what,
		      (ulonglong)r->records_pa, err.msg);
		return;
	}
	struct btsdec_ring_text v = {
		.what = what, .recs = recs, .nr = nr, .capacity = r->capacity,
		.source = r->source, .wrapped = wrapped,
		.frozen = r->flags & BTS_RING_F_FROZEN, .freeze_ts = r->freeze_ts,
		.copy = user ? NULL : "full ring", .user = user,
	};

	/* kernel branches decoded against vmlinux; a task's user branches
	 * (code not in vmlinux) and -r as the ring's words */
	if (raw || user || !print_decoded(&v, n))
		btsdec_ring_text_write(fp, &v, n, raw, crash_name, &user);
	free(recs);
}

static int cpu_selected(const char *list, ulong cpu)
{
	char buf[BUFSIZE], *tok, *save = NULL;

	if (!list)
		return TRUE;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strtoul(tok, NULL, 10) == cpu)
			return TRUE;
	return FALSE;
}

static void bts_cpus(const char *cpus, ulong n, int raw)
{
	struct btsdec_table t;
	struct btsdec_err err;
	ulong cpu, shown = 0;
	char what[64];

	if (!bts_layout.table_pa) {
		error(INFO, "no BTS_CRASH_TABLE_PA in VMCOREINFO: per-CPU rings were off "
		      "(per-task rings: bts -t)\n");
		return;
	}
	if (btsdec_table_load(crash_read, &phys, bts_layout.table_pa, &t, &err)) {
		error(INFO, "ring table at physical %llx: %s\n",
		      (ulonglong)bts_layout.table_pa, err.msg);
		return;
	}
	for (cpu = 0; cpu < t.nr_entries; cpu++) {
		struct bts_crash_ring r;

		if (!t.entries[cpu] || !cpu_selected(cpus, cpu))
			continue;
		snprintf(what, sizeof(what), "CPU %lu%s", cpu,
			 cpu == t.panic_cpu ? " (panic CPU)" : "");
		if (shown++)
			fprintf(fp, "\n");
		if (read_ring(t.entries[cpu], &phys, what, &r))
			print_ring(what, &r, n, raw, FALSE);
	}
	if (!shown)
		error(INFO, "no ring for the CPU(s) asked for\n");
	btsdec_table_free(&t);
}

/*
 * Walks init_task.tasks and each group's thread_group list for pid: crash's
 * own task table can come up short on small kernels ("not found in PID
 * hash"), the lists are always there.  Returns the task_struct or 0.
 */
static ulong find_task_by_pid(ulong pid)
{
	long tasks = MEMBER_OFFSET("task_struct", "tasks");
	long group = MEMBER_OFFSET("task_struct", "thread_group");
	long pid_off = MEMBER_OFFSET("task_struct", "pid");
	ulong head = symbol_exists("init_task") ? symbol_value("init_task") : 0;
	ulong leader = head, t, next;
	int p, i, j;

	if (!head || tasks < 0 || group < 0 || pid_off < 0)
		return 0;
	for (i = 0; i < 1000000; i++) {
		t = leader;
		for (j = 0; j < 100000; j++) {
			if (readmem(t + pid_off, KVADDR, &p, sizeof(p), "pid",
				    RETURN_ON_ERROR | QUIET) && (ulong)p == pid)
				return t;
			if (!readmem(t + group, KVADDR, &next, sizeof(next), "thread_group",
				     RETURN_ON_ERROR | QUIET))
				break;
			t = next - group;
			if (t == leader)
				break;
		}
		if (!readmem(leader + tasks, KVADDR, &next, sizeof(next), "tasks",
			     RETURN_ON_ERROR | QUIET))
			return 0;
		leader = next - tasks;
		if (leader == head)
			return 0;
	}
	return 0;
}

static void bts_task(char *arg, ulong n, int raw)
{
	struct task_context *tc;
	struct bts_crash_ring r;
	ulong value, ring, task = 0;
	char what[160], comm[TASK_COMM_LEN + 1] = "", ecomm[4 * TASK_COMM_LEN + 1];
	int pid = -1;

	if (bts_layout.task_bts_crash < 0) {
		error(INFO, "no task_struct.bts_crash (vmlinux debuginfo or VMCOREINFO)\n");
		return;
	}
	switch (str_to_context(arg, &value, &tc)) {
	case STR_PID:
	case STR_TASK:
		task = tc->task;
		break;
	default:	/* not in crash's task table: a pid on the task lists */
		if (decimal(arg, 0))
			task = find_task_by_pid(stol(arg, FAULT_ON_ERROR, NULL));
		else if (hexadecimal(arg, 0))
			task = htol(arg, FAULT_ON_ERROR, NULL);
	}
	if (!task) {
		error(INFO, "no such task or pid: %s\n", arg);
		return;
	}
	if (!readmem(task + bts_layout.task_bts_crash, KVADDR, &ring, sizeof(ring),
		     "task_struct.bts_crash", RETURN_ON_ERROR | QUIET)) {
		error(INFO, "task %lx not readable\n", task);
		return;
	}
	readmem(task + MEMBER_OFFSET("task_struct", "pid"), KVADDR, &pid, sizeof(pid),
		"pid", RETURN_ON_ERROR | QUIET);
	readmem(task + MEMBER_OFFSET("task_struct", "comm"), KVADDR, comm, TASK_COMM_LEN,
		"comm", RETURN_ON_ERROR | QUIET);
	comm[TASK_COMM_LEN] = '\0';
	/* the comm is the task's: escaped, for every line that names it */
	snprintf(what, sizeof(what), "PID %d (%s) user branches", pid,
		 btsdec_escape_buf(comm, ecomm, sizeof(ecomm), 0));
	bts_exe_init(task);
	if (!ring) {
		fprintf(fp, "%s: not traced\n", what);
		return;
	}
	if (read_ring(ring, &kvaddr, what, &r))
		print_ring(what, &r, n, raw, TRUE);
}

static void cmd_bts(void)
{
	char *cpus = NULL, *task = NULL;
	ulong n = 32;
	int c, raw = FALSE;

	while ((c = getopt(argcnt, args, "c:n:rt:")) != EOF) {
		switch (c) {
		case 'c':
			cpus = optarg;
			break;
		case 'n':
			n = stol(optarg, FAULT_ON_ERROR, NULL);
			break;
		case 'r':
			raw = TRUE;
			break;
		case 't':
			task = optarg;
			break;
		default:
			argerrs++;
		}
	}
	if (argerrs || args[optind])
		cmd_usage(pc->curcmd, SYNOPSIS);
	if (!bts_layout_init())
		return;
	if (task)
		bts_task(task, n, raw);
	else
		bts_cpus(cpus, n, raw);
}

static char *help_bts[] = {
	"bts",
	"last branches before the crash (btscrash)",
	"[-c cpu[,cpu...]] [-n count] [-r] [-t pid | taskp]",
	"  Shows the last taken branches each CPU's kernel recorded before it was",
	"  frozen by the crash path (panic or kdump), oldest first, each numbered",
	"  by its place in the ring from the oldest, and decoded against this",
	"  session's vmlinux: the kind of each branch (read from vmlinux's code;",
	"  * marks an indirect one), function+offset and file:line from its",
	"  DWARF, the lines `btsdump vmcore VMCORE vmlinux` prints.  The panicking CPU",
	"  is marked.  The rings are found through VMCOREINFO (BTS_CRASH_TABLE_PA)",
	"  and need no vmlinux offsets.  Where the records come from is named on",
	"  each ring's line: the BTS hardware (every kernel branch), the emulation",
	"  (kernel function entries), or the LBR (bts_crash.source=lbr-kernel: the",
	"  CPU's last 32 branches, frozen by the oops or the crash path; a count",
	"  of cycles after a branch where the CPU gave one).",
	" ",
	"     -c cpu  only these CPUs (comma-separated).",
	"   -n count  the newest count branches of each ring (default 32; 0: all).",
	"         -r  raw from, to and flags words, not decoded.",
	"    -t task  the user-space branches of a traced task (pid or task_struct",
	"             address), from its per-task ring, with context-switch markers;",
	"             addresses in the executable's text are marked with its name.",
	"\nEXAMPLE",
	"  After \"echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT\" on CPU 1 of 2:\n",
	"    %s> bts -n 4",
	"    CPU 0 (panic CPU): 4 of 4096 records (full ring, ring of 4096, wrapped, frozen at 5.748533 s), emulation; kernel function entries (ftrace), each from its reconstructed call site",
	"       4093  call      0xffffffff8a6d97f8 exc_page_fault+0xbd          -> 0xffffffff8a444a9a fault_in_kernel_space  [fault.c:1429 -> fault.c:1115]",
	"       4094  call      0xffffffff8a6d98f6 exc_page_fault+0x1bb         -> 0xffffffff8a444263 page_fault_oops  [fault.c:1259 -> fault.c:656]",
	"       4095  call      0xffffffff8a44429e page_fault_oops+0x3b         -> 0xffffffff8a5276d8 is_vmalloc_addr  [fault.c:677 -> vmalloc.c:76]",
	"       4096  call      0xffffffff8a4442fc page_fault_oops+0x99         -> 0xffffffff8a420cc3 oops_begin  [fault.c:716 -> dumpstack.c:353]",
	"",
	"    CPU 1: 4 of 4096 records (full ring, ring of 4096, wrapped, frozen at 5.748533 s), emulation; kernel function entries (ftrace), each from its reconstructed call site",
	"       4093  call      0xffffffff8a46bd74 notifier_call_chain+0x33     -> 0xffffffff8a43d7e0 ds_lbr_notify  [notifier.c:87 -> ds.c:1545]",
	"       4094  call      0xffffffff8a46bd74 notifier_call_chain+0x33     -> 0xffffffff8a43d9bc ds_emul_notify  [notifier.c:87 -> ds.c:1013]",
	"       4095  call      0xffffffff8a43da1c ds_emul_notify+0x60          -> 0xffffffff8a4b3363 bts_crash_lookup  [ds.c:1023 -> bts_crash.c:76]",
	"       4096  call      0xffffffff8a43da83 ds_emul_notify+0xc7          -> 0xffffffff8a43d08f user_insn_decode  [ds.c:949 -> ds.c:864]",
	"\n  The same ring's newest records as words:\n",
	"    %s> bts -r -n 2 -c 1",
	"    CPU 1: 2 of 4096 records (full ring, ring of 4096, wrapped, frozen at 5.748533 s), emulation; kernel function entries (ftrace), each from its reconstructed call site",
	"      [4095] ffffffff8a43da1c ffffffff8a4b3363 0000000000000000",
	"      [4096] ffffffff8a43da83 ffffffff8a43d08f 0000000000000000",
	"\n  A traced process that was running at the panic:\n",
	"    %s> bts -t 49 -n 3",
	"    PID 49 (crasher) user branches: 3 of 4096 records (ring of 4096, wrapped), emulation",
	"      [4094] 00000000004016de (crasher)                    -> 0000000000401680 (crasher)",
	"      [4095] 00000000004016b9 (crasher)                    -> 00000000004016d1 (crasher)",
	"      [4096] -- switch-out cpu 0 at 5.853773010s --",
	"\n  A kernel without per-CPU rings:\n",
	"    %s> bts",
	"    bts: this kernel keeps no branch traces (no BTS_CRASH=1 in VMCOREINFO: not a btscrash kernel, or format too new)",
	NULL
};

static struct command_table_entry command_table[] = {
	{ "bts", cmd_bts, help_bts, 0 },
	{ NULL },
};

#ifndef BTS_CRASH_FOR
#error "BTS_CRASH_FOR: the crash release whose defs.h this is built against"
#endif

/*
 * defs.h's structures change between crash releases: a module built for
 * another one would misread them, so it registers nothing there (crash then
 * unloads it).  program_version is among program_context's first members.
 */
static void __attribute__((constructor)) bts_init(void)
{
	if (strcmp(pc->program_version, BTS_CRASH_FOR) != 0) {
		error(INFO, "bts.so was built for crash %s, this is crash %s\n",
		      BTS_CRASH_FOR, pc->program_version);
		return;
	}
	register_extension(command_table);
}

/* `extend -u bts.so`, or crash's exit: the decoder goes with the module. */
static void __attribute__((destructor)) bts_fini(void)
{
	btsdec_sym_close(bts_dec.sym);
	btsdec_classifier_free(bts_dec.cls);
}
