// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * crash extension: `bts`, the last branches of each CPU (and of a traced
 * task) from a vmcore of a btscrash kernel.  Finds everything through the
 * VMCOREINFO keys of docs/format.md §4 (BTS_CRASH_TABLE_PA, SIZE/OFFSET of
 * bts_crash_ring, OFFSET(task_struct.bts_crash)): no offset is hard-coded,
 * the struct layout in include/uapi/linux/bts_crash.h is only used for the
 * constants.  Symbols come from crash's own symbol table.
 *   crash> extend bts.so
 *   crash> bts [-c CPU[,CPU...]] [-n N] [-r] [-t PID|TASK]
 */
#include <crash/defs.h>
#include <stdint.h>

#include "bts_crash.h"	/* include/uapi/linux: magics, markers, limits */

#define BTS_MAX_CAPACITY	(1ULL << 24)	/* format.md §4.3: readers reject more */

/* One ring descriptor, read field by field at the exported offsets. */
struct bts_ring_info {
	uint32_t magic, flags;
	uint16_t version, source;
	uint32_t record_size;
	uint64_t id, capacity, index, records_pa, lost, freeze_ts;
};

static struct {
	long size, flags, id, capacity, index, records_pa, lost, source, freeze_ts;
	long task_bts_crash;
	int ok;
} bts_layout;

/* A numeric VMCOREINFO value, -1 if the key is absent. */
static long vmcoreinfo_num(const char *key, int base)
{
	char *s = pc->read_vmcoreinfo ? pc->read_vmcoreinfo(key) : NULL;
	long v;

	if (!s)
		return -1;
	v = strtol(s, NULL, base);
	free(s);
	return v;
}

static int bts_layout_init(void)
{
	if (bts_layout.ok)
		return TRUE;
	if (vmcoreinfo_num("BTS_CRASH", 10) != 1) {
		error(INFO, "this kernel keeps no branch traces "
		      "(no BTS_CRASH=1 in VMCOREINFO: not a btscrash kernel, or format too new)\n");
		return FALSE;
	}
	bts_layout.size = vmcoreinfo_num("SIZE(bts_crash_ring)", 10);
	bts_layout.flags = vmcoreinfo_num("OFFSET(bts_crash_ring.flags)", 10);
	bts_layout.id = vmcoreinfo_num("OFFSET(bts_crash_ring.id)", 10);
	bts_layout.capacity = vmcoreinfo_num("OFFSET(bts_crash_ring.capacity)", 10);
	bts_layout.index = vmcoreinfo_num("OFFSET(bts_crash_ring.index)", 10);
	bts_layout.records_pa = vmcoreinfo_num("OFFSET(bts_crash_ring.records_pa)", 10);
	bts_layout.lost = vmcoreinfo_num("OFFSET(bts_crash_ring.lost)", 10);
	bts_layout.source = vmcoreinfo_num("OFFSET(bts_crash_ring.source)", 10);
	bts_layout.freeze_ts = vmcoreinfo_num("OFFSET(bts_crash_ring.freeze_ts)", 10);
	bts_layout.task_bts_crash = MEMBER_OFFSET("task_struct", "bts_crash");
	if (bts_layout.task_bts_crash < 0)
		bts_layout.task_bts_crash = vmcoreinfo_num("OFFSET(task_struct.bts_crash)", 10);
#define BAD(off)	((off) < 0 || (off) > bts_layout.size - 8)
	if (bts_layout.size < 72 || bts_layout.size > 4096 || BAD(bts_layout.flags) ||
	    BAD(bts_layout.id) || BAD(bts_layout.capacity) || BAD(bts_layout.index) ||
	    BAD(bts_layout.records_pa) || BAD(bts_layout.lost) || BAD(bts_layout.source) ||
	    BAD(bts_layout.freeze_ts)) {
#undef BAD
		error(INFO, "VMCOREINFO lacks the bts_crash_ring layout (SIZE/OFFSET keys)\n");
		return FALSE;
	}
	bts_layout.ok = TRUE;
	return TRUE;
}

#define FIELD(buf, off, type)	(*(type *)((char *)(buf) + (off)))

/* Reads and checks a ring descriptor; what = "CPU 3" or "task 1234". */
static int read_ring(ulonglong addr, int memtype, const char *what, struct bts_ring_info *r)
{
	char buf[4096];

	if (!readmem(addr, memtype, buf, bts_layout.size, "bts_crash_ring",
		     RETURN_ON_ERROR | QUIET)) {
		error(INFO, "%s: ring descriptor at %llx not in dump: filtered or truncated\n",
		      what, addr);
		return FALSE;
	}
	r->magic = FIELD(buf, 0, uint32_t);
	r->version = FIELD(buf, 4, uint16_t);
	r->record_size = FIELD(buf, 8, uint32_t);
	r->flags = FIELD(buf, bts_layout.flags, uint32_t);
	r->id = FIELD(buf, bts_layout.id, uint64_t);
	r->capacity = FIELD(buf, bts_layout.capacity, uint64_t);
	r->index = FIELD(buf, bts_layout.index, uint64_t);
	r->records_pa = FIELD(buf, bts_layout.records_pa, uint64_t);
	r->lost = FIELD(buf, bts_layout.lost, uint64_t);
	r->source = FIELD(buf, bts_layout.source, uint16_t);
	r->freeze_ts = FIELD(buf, bts_layout.freeze_ts, uint64_t);
	if (r->magic != BTS_CRASH_RING_MAGIC || r->version != BTS_CRASH_RING_VERSION) {
		error(INFO, "%s: not a ring descriptor (magic %x, version %u)\n",
		      what, r->magic, r->version);
		return FALSE;
	}
	if (r->record_size != BTS_RECORD_SIZE || !r->capacity ||
	    r->capacity > BTS_MAX_CAPACITY || r->index >= r->capacity) {
		error(INFO, "%s: corrupt ring (record size %u, capacity %llu, index %llu)\n",
		      what, r->record_size, (ulonglong)r->capacity, (ulonglong)r->index);
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

static void print_addr(uint64_t a, int user, int pad)
{
	char sym[BUFSIZE];
	struct syment *sp;
	ulong off = 0;

	if (!user && (sp = value_search(a, &off)))
		sprintf(sym, off ? "%s+0x%lx" : "%s", sp->name, off);
	else if (user && bts_exe.name[0] && a >= bts_exe.start && a < bts_exe.end)
		snprintf(sym, sizeof(sym), "(%s)", bts_exe.name);
	else
		sym[0] = '\0';
	if (pad)
		fprintf(fp, "%016llx %-28s", (ulonglong)a, sym);
	else
		fprintf(fp, sym[0] ? "%016llx %s" : "%016llx", (ulonglong)a, sym);
}

static void print_marker(const struct bts_record *rec)
{
	switch (BTS_MARKER_KIND(rec->from)) {
	case BTS_MARK_SWITCH_OUT:
	case BTS_MARK_SWITCH_IN:
		fprintf(fp, "-- switch-%s cpu %llu at %llu.%09llu s --\n",
			BTS_MARKER_KIND(rec->from) == BTS_MARK_SWITCH_IN ? "in" : "out",
			(ulonglong)rec->flags, (ulonglong)rec->to / 1000000000ULL,
			(ulonglong)rec->to % 1000000000ULL);
		break;
	case BTS_MARK_GAP:
		fprintf(fp, "-- gap of %llu ns (reason %u) --\n",
			(ulonglong)rec->flags, BTS_MARKER_SUB(rec->from));
		break;
	default:
		fprintf(fp, "-- unknown marker %llx --\n", (ulonglong)rec->from);
	}
}

/* The ring's newest n records (0: all), oldest first, newest numbered 1. */
static void print_ring(const char *what, const struct bts_ring_info *r, ulong n,
		       int raw, int user)
{
	int wrapped = r->flags & BTS_RING_F_WRAPPED;
	ulonglong first, nr, i, take;
	struct bts_record *recs;
	size_t bytes = r->capacity * BTS_RECORD_SIZE;

	recs = (struct bts_record *)GETBUF(bytes);
	if (!readmem(r->records_pa, PHYSADDR, recs, bytes, "bts records",
		     RETURN_ON_ERROR | QUIET)) {
		error(INFO, "%s: records at physical %llx not in dump: filtered or truncated\n",
		      what, (ulonglong)r->records_pa);
		FREEBUF(recs);
		return;
	}
	/* format.md §4.3: a written slot at index means it wrapped (the flag may lag) */
	if (recs[r->index].from || recs[r->index].to)
		wrapped = 1;
	nr = wrapped ? r->capacity : r->index;
	first = wrapped ? r->index : 0;
	take = n && n < nr ? n : nr;
	fprintf(fp, "%s: %llu of %llu records (ring of %llu%s%s), %s", what, take, nr,
		(ulonglong)r->capacity, wrapped ? ", wrapped" : "",
		r->flags & BTS_RING_F_FROZEN ? ", frozen" : "",
		r->source == BTS_SOURCE_HW ? "hardware" : "emulation");
	if (r->freeze_ts)
		fprintf(fp, ", frozen at %llu.%06llu s", (ulonglong)r->freeze_ts / 1000000000ULL,
			(ulonglong)(r->freeze_ts % 1000000000ULL) / 1000);
	fprintf(fp, "\n");
	if (!nr)
		fprintf(fp, "  (no branches recorded)\n");
	for (i = nr - take; i < nr; i++) {
		const struct bts_record *rec = &recs[(first + i) % r->capacity];

		fprintf(fp, "  [%4llu] ", nr - i);
		if (raw) {
			fprintf(fp, "%016llx %016llx %016llx\n", (ulonglong)rec->from,
				(ulonglong)rec->to, (ulonglong)rec->flags);
		} else if ((rec->from & BTS_MARKER_TAG_MASK) == BTS_MARKER_TAG) {
			print_marker(rec);
		} else {
			print_addr(rec->from, user, TRUE);
			fprintf(fp, " -> ");
			print_addr(rec->to, user, FALSE);
			fprintf(fp, "\n");
		}
	}
	FREEBUF(recs);
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
	long table_pa = vmcoreinfo_num("BTS_CRASH_TABLE_PA", 16);
	uint32_t hdr[4];
	uint64_t panic_cpu, *entries;
	ulong cpu, shown = 0;
	char what[64];

	if (table_pa <= 0) {
		error(INFO, "no BTS_CRASH_TABLE_PA in VMCOREINFO: per-CPU rings were off\n");
		return;
	}
	if (!readmem(table_pa, PHYSADDR, hdr, sizeof(hdr), "bts_crash_table",
		     RETURN_ON_ERROR | QUIET) ||
	    !readmem(table_pa + 16, PHYSADDR, &panic_cpu, sizeof(panic_cpu),
		     "bts_crash_table", RETURN_ON_ERROR | QUIET)) {
		error(INFO, "ring table at physical %lx not in dump: filtered or truncated\n",
		      table_pa);
		return;
	}
	/* magic, version|hdr_size, nr_entries, entry_size (format.md §4.2) */
	if (hdr[0] != BTS_CRASH_TABLE_MAGIC || (hdr[1] & 0xffff) != BTS_CRASH_RING_VERSION ||
	    hdr[3] != 8 || !hdr[2] || hdr[2] > 65536) {
		error(INFO, "corrupt ring table at physical %lx\n", table_pa);
		return;
	}
	entries = (uint64_t *)GETBUF(hdr[2] * sizeof(uint64_t));
	if (!readmem(table_pa + (hdr[1] >> 16), PHYSADDR, entries, hdr[2] * sizeof(uint64_t),
		     "bts_crash_table entries", RETURN_ON_ERROR | QUIET)) {
		error(INFO, "ring table entries not in dump: filtered or truncated\n");
		FREEBUF(entries);
		return;
	}
	for (cpu = 0; cpu < hdr[2]; cpu++) {
		struct bts_ring_info r;

		if (!entries[cpu] || !cpu_selected(cpus, cpu))
			continue;
		snprintf(what, sizeof(what), "CPU %lu%s", cpu,
			 cpu == panic_cpu ? " (panic CPU)" : "");
		if (shown++)
			fprintf(fp, "\n");
		if (read_ring(entries[cpu], PHYSADDR, what, &r))
			print_ring(what, &r, n, raw, FALSE);
	}
	if (!shown)
		error(INFO, "no ring for the CPU(s) asked for\n");
	FREEBUF(entries);
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
	struct bts_ring_info r;
	ulong value, ring, task = 0;
	char what[96], comm[TASK_COMM_LEN + 1] = "";
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
	snprintf(what, sizeof(what), "PID %d (%s) user branches", pid, comm);
	bts_exe_init(task);
	if (!ring) {
		fprintf(fp, "%s: not traced\n", what);
		return;
	}
	if (read_ring(ring, KVADDR, what, &r))
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
	"  frozen by the crash path (panic or kdump), oldest first, the newest",
	"  numbered 1, symbolized with this session's symbols.  The panicking CPU",
	"  is marked.  The rings are found through VMCOREINFO (BTS_CRASH_TABLE_PA)",
	"  and need no vmlinux offsets.",
	" ",
	"     -c cpu  only these CPUs (comma-separated).",
	"   -n count  the newest count branches of each ring (default 32; 0: all).",
	"         -r  raw from, to and flags words, no symbols.",
	"    -t task  the user-space branches of a traced task (pid or task_struct",
	"             address), from its per-task ring, with context-switch markers;",
	"             addresses in the executable's text are marked with its name.",
	"\nEXAMPLE",
	"  After \"echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT\" on CPU 1 of 2:\n",
	"    %s> bts -n 6",
	"    CPU 0: 6 of 4096 records (ring of 4096, wrapped, frozen), emulation, frozen at 6.618283 s",
	"      [   6] ffffffff8f2a8f75 insn_get_prefixes+0x37       -> ffffffff8f2a8ea0 __insn_get_emulate_prefix.constprop.0",
	"      [   5] ffffffff8f2a8f9b insn_get_prefixes+0x5d       -> ffffffff8f2a8021 inat_get_opcode_attribute",
	"      [   4] ffffffff8f2a907a insn_get_prefixes+0x13c      -> ffffffff8f2a8021 inat_get_opcode_attribute",
	"      [   3] ffffffff8f2a90b8 insn_get_prefixes+0x17a      -> ffffffff8f2a8021 inat_get_opcode_attribute",
	"      [   2] ffffffff8f2a929a insn_get_opcode+0xd3         -> ffffffff8f2a8021 inat_get_opcode_attribute",
	"      [   1] ffffffff8f2b21f4 irqentry_exit_to_user_mode   -> ffffffff8f096e8b exit_to_user_mode_prepare",
	"",
	"    CPU 1 (panic CPU): 6 of 4096 records (ring of 4096, wrapped, frozen), emulation, frozen at 6.618283 s",
	"      [   6] ffffffff8f26069b direct_entry+0xa5            -> ffffffff8f2aef79 lkdtm_do_action",
	"      [   5] ffffffff8f26069b direct_entry+0xa5            -> ffffffff8f26089f lkdtm_EXCEPTION",
	"      [   4] ffffffff8f2b1d28 exc_page_fault+0xbd          -> ffffffff8f03d7e1 fault_in_kernel_space",
	"      [   3] ffffffff8f2b1e26 exc_page_fault+0x1bb         -> ffffffff8f03cfb4 page_fault_oops",
	"      [   2] ffffffff8f03cfef page_fault_oops+0x3b         -> ffffffff8f119bc2 is_vmalloc_addr",
	"      [   1] ffffffff8f03d04d page_fault_oops+0x99         -> ffffffff8f01ec99 oops_begin",
	"\n  A traced process that was running at the panic:\n",
	"    %s> bts -t 49 -n 3",
	"    PID 49 (crasher) user branches: 3 of 4096 records (ring of 4096, wrapped), emulation",
	"      [   3] 00000000004016de (crasher)                    -> 0000000000401680 (crasher)",
	"      [   2] 00000000004016b9 (crasher)                    -> 00000000004016d1 (crasher)",
	"      [   1] -- switch-out cpu 0 at 5.853773010 s --",
	"\n  A kernel without per-CPU rings:\n",
	"    %s> bts",
	"    bts: this kernel keeps no branch traces (no BTS_CRASH=1 in VMCOREINFO: not a btscrash kernel, or format too new)",
	NULL
};

static struct command_table_entry command_table[] = {
	{ "bts", cmd_bts, help_bts, 0 },
	{ NULL },
};

static void __attribute__((constructor)) bts_init(void)
{
	register_extension(command_table);
}

static void __attribute__((destructor)) bts_fini(void)
{
}
