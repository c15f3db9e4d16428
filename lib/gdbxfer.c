// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The objects the stub serves through qXfer (lib/gdbstub.c), by offset and
 * length: the x86-64 Linux target description (from the register table
 * that also reads NT_PRSTATUS / NT_FPREGSET / NT_X86_XSTATE), auxv, the
 * executable's name, the shared libraries (r_debug's link_map list in
 * the core's memory) and each thread's branch trace as gdb's BTS blocks
 * (features/btrace.dtd), made from its trace note.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/user.h>

#include "gdbstub-int.h"

/* ---- Registers ------------------------------------------------------------ */

enum reg_src {
	SRC_PR,		/* pr_reg of NT_PRSTATUS */
	SRC_FP,		/* NT_FPREGSET (the fxsave layout) */
	SRC_FTAG,	/* fxsave's abridged tag word, widened */
	SRC_XS,		/* NT_X86_XSTATE (the XSAVE standard layout) */
};

/* The features in the order of their registers; F_AVX last, described
 * only when the core's xstate holds AVX (the faulting thread's XCR0). */
enum reg_feature { F_CORE, F_SSE, F_LINUX, F_SEGMENTS, F_AVX, F__MAX };

static const char *const feature_name[F__MAX] = {
	"org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse",
	"org.gnu.gdb.i386.linux", "org.gnu.gdb.i386.segments",
	"org.gnu.gdb.i386.avx",
};

/* The XSAVE area (SDM Vol. 1 13.4, standard form, as Linux dumps it):
 * the XCR0 Linux keeps in fxsave's software-reserved bytes, the header's
 * XSTATE_BV, the AVX component (YMM_Hi128: the upper halves of ymm0-15). */
#define XS_XCR0		464
#define XS_XSTATE_BV	512
#define XS_YMM_HI	576
#define XS_AVX		(1u << 2)
#define XS_NEEDED	(XS_YMM_HI + 16 * 16)

struct reg_def {
	const char *name;
	const char *type;
	uint8_t size;		/* bytes in the g packet */
	uint8_t width;		/* bytes taken from the source, zero-extended */
	uint8_t feature;
	uint8_t src;
	uint16_t off;		/* in pr_reg or in user_fpregs_struct */
};

#define GP(n, t)   { #n, t, 8, 8, F_CORE, SRC_PR, offsetof(struct user_regs_struct, n) }
#define SEG(n)     { #n, "int32", 4, 4, F_CORE, SRC_PR, offsetof(struct user_regs_struct, n) }
#define FPX(n, f, w) { n, "int", 4, w, F_CORE, SRC_FP, offsetof(struct user_fpregs_struct, f) }
#define ST(i)      { "st" #i, "i387_ext", 10, 10, F_CORE, SRC_FP, \
		     offsetof(struct user_fpregs_struct, st_space) + 16 * i }
#define XMM(i)     { "xmm" #i, "vec128", 16, 16, F_SSE, SRC_FP, \
		     offsetof(struct user_fpregs_struct, xmm_space) + 16 * i }
#define YMMH(i)    { "ymm" #i "h", "uint128", 16, 16, F_AVX, SRC_XS, XS_YMM_HI + 16 * i }

/* gdb's amd64-linux register numbers, in order (features/i386/64bit-*.xml). */
static const struct reg_def regs[] = {
	GP(rax, "int64"), GP(rbx, "int64"), GP(rcx, "int64"), GP(rdx, "int64"),
	GP(rsi, "int64"), GP(rdi, "int64"), GP(rbp, "data_ptr"), GP(rsp, "data_ptr"),
	GP(r8, "int64"), GP(r9, "int64"), GP(r10, "int64"), GP(r11, "int64"),
	GP(r12, "int64"), GP(r13, "int64"), GP(r14, "int64"), GP(r15, "int64"),
	GP(rip, "code_ptr"), SEG(eflags),
	SEG(cs), SEG(ss), SEG(ds), SEG(es), SEG(fs), SEG(gs),
	ST(0), ST(1), ST(2), ST(3), ST(4), ST(5), ST(6), ST(7),
	FPX("fctrl", cwd, 2), FPX("fstat", swd, 2),
	{ "ftag", "int", 4, 2, F_CORE, SRC_FTAG, offsetof(struct user_fpregs_struct, ftw) },
	{ "fiseg", "int", 4, 2, F_CORE, SRC_FP, offsetof(struct user_fpregs_struct, rip) + 4 },
	FPX("fioff", rip, 4),
	{ "foseg", "int", 4, 2, F_CORE, SRC_FP, offsetof(struct user_fpregs_struct, rdp) + 4 },
	FPX("fooff", rdp, 4), FPX("fop", fop, 2),
	XMM(0), XMM(1), XMM(2), XMM(3), XMM(4), XMM(5), XMM(6), XMM(7),
	XMM(8), XMM(9), XMM(10), XMM(11), XMM(12), XMM(13), XMM(14), XMM(15),
	{ "mxcsr", "int", 4, 4, F_SSE, SRC_FP, offsetof(struct user_fpregs_struct, mxcsr) },
	{ "orig_rax", "int", 8, 8, F_LINUX, SRC_PR, offsetof(struct user_regs_struct, orig_rax) },
	{ "fs_base", "int", 8, 8, F_SEGMENTS, SRC_PR, offsetof(struct user_regs_struct, fs_base) },
	{ "gs_base", "int", 8, 8, F_SEGMENTS, SRC_PR, offsetof(struct user_regs_struct, gs_base) },
	YMMH(0), YMMH(1), YMMH(2), YMMH(3), YMMH(4), YMMH(5), YMMH(6), YMMH(7),
	YMMH(8), YMMH(9), YMMH(10), YMMH(11), YMMH(12), YMMH(13), YMMH(14), YMMH(15),
};

#define NR_REGS (sizeof(regs) / sizeof(regs[0]))
#define PR_REG_END (offsetof(struct elf_prstatus, pr_reg) + sizeof(struct user_regs_struct))

#define NR_AVX_REGS 16

static void load_regs(struct btsdec_gdbstub *s, struct stub_thread *t)
{
	uint64_t xcr0 = 0;
	ssize_t n;

	t->regs_read = true;
	n = btsdec_core_note_read(s->core, &t->th->prstatus, 0, t->prs, sizeof(t->prs));
	t->has_prs = t->th->has_regs && n >= (ssize_t)PR_REG_END;
	n = btsdec_core_note_read(s->core, &t->th->fpregset, 0, t->fp, sizeof(t->fp));
	t->has_fp = n >= (ssize_t)sizeof(struct user_fpregs_struct);
	n = btsdec_core_note_read(s->core, &t->th->xstate, 0, t->xs, sizeof(t->xs));
	if (n >= XS_NEEDED)
		memcpy(&xcr0, t->xs + XS_XCR0, sizeof(xcr0));
	t->has_avx = n >= XS_NEEDED && (xcr0 & XS_AVX);
}

/* The core's registers: with AVX's when its first thread's xstate has
 * them (every thread of a process shares XCR0). */
size_t stub_nr_regs(struct btsdec_gdbstub *s)
{
	if (!s->t[0].regs_read)
		load_regs(s, &s->t[0]);
	return s->t[0].has_avx ? NR_REGS : NR_REGS - NR_AVX_REGS;
}

size_t stub_reg_size(size_t n) { return n < NR_REGS ? regs[n].size : 0; }

int stub_reg(struct btsdec_gdbstub *s, struct stub_thread *t, size_t n,
	     uint8_t *out)
{
	const struct reg_def *d = &regs[n];
	uint16_t ftw = 0, tag = 0;

	if (!t->regs_read)
		load_regs(s, t);
	memset(out, 0, 16);
	if (d->src == SRC_PR) {
		if (!t->has_prs)
			return -ENOENT;
		memcpy(out, t->prs + offsetof(struct elf_prstatus, pr_reg) + d->off, d->width);
		return d->size;
	}
	if (d->src == SRC_XS) {
		uint64_t bv;

		if (!t->has_avx)
			return -ENOENT;
		memcpy(&bv, t->xs + XS_XSTATE_BV, sizeof(bv));
		if (bv & XS_AVX)	/* else in its initial state: zeros */
			memcpy(out, t->xs + d->off, d->width);
		return d->size;
	}
	if (!t->has_fp)
		return -ENOENT;
	if (d->src == SRC_FP) {
		memcpy(out, t->fp + d->off, d->width);
		return d->size;
	}
	memcpy(&ftw, t->fp + d->off, sizeof(ftw));
	for (int i = 0; i < 8; i++)	/* abridged: 1 = valid; full: 3 = empty */
		tag |= (uint16_t)((ftw >> i & 1) ? 0 : 3) << (2 * i);
	memcpy(out, &tag, sizeof(tag));
	return d->size;
}

/* The target description, one feature after another from the table. */
static void make_tdesc(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *b)
{
	size_t nr = stub_nr_regs(s);

	btsdec_rsp_puts(b, "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
			"<target version=\"1.0\"><architecture>i386:x86-64</architecture>"
			"<osabi>GNU/Linux</osabi>");
	for (int f = 0; f < (nr == NR_REGS ? F__MAX : F_AVX); f++) {
		btsdec_rsp_printf(b, "<feature name=\"%s\">", feature_name[f]);
		if (f == F_SSE)
			btsdec_rsp_puts(b,
				"<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>"
				"<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>"
				"<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>"
				"<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>"
				"<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>"
				"<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>"
				"<union id=\"vec128\"><field name=\"v4_float\" type=\"v4f\"/>"
				"<field name=\"v2_double\" type=\"v2d\"/>"
				"<field name=\"v16_int8\" type=\"v16i8\"/>"
				"<field name=\"v8_int16\" type=\"v8i16\"/>"
				"<field name=\"v4_int32\" type=\"v4i32\"/>"
				"<field name=\"v2_int64\" type=\"v2i64\"/>"
				"<field name=\"uint128\" type=\"uint128\"/></union>");
		for (size_t n = 0; n < nr; n++)
			if (regs[n].feature == f)
				btsdec_rsp_printf(b, "<reg name=\"%s\" bitsize=\"%u\" type=\"%s\" "
						  "regnum=\"%zu\"%s/>", regs[n].name,
						  regs[n].size * 8u, regs[n].type, n,
						  n >= 24 && n < 40 ? " group=\"float\"" : "");
		btsdec_rsp_puts(b, "</feature>");
	}
	btsdec_rsp_puts(b, "</target>");
}

/* ---- auxv and the executable ---------------------------------------------- */

static void make_auxv(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *b)
{
	const struct btsdec_note_loc *l = btsdec_core_note(s->core, NT_AUXV);
	char chunk[4096];
	ssize_t n;

	for (uint64_t off = 0; l && off < l->size; off += (uint64_t)n) {
		n = btsdec_core_note_read(s->core, l, off, chunk, sizeof(chunk));
		if (n <= 0)
			break;
		btsdec_rsp_put(b, chunk, (size_t)n);
	}
}

/* The name of the NT_FILE mapping holding addr, into b (nothing if none). */
static void nt_file_name(struct btsdec_gdbstub *s, uint64_t addr,
			 struct btsdec_rsp_buf *b)
{
	const struct btsdec_note_loc *l = btsdec_core_note(s->core, NT_FILE);
	uint64_t *d, count, want = (uint64_t)-1;
	const char *name, *end;

	if (!l || l->size < 16 || l->size > (64u << 20) || !(d = malloc(l->size)))
		return;
	if (btsdec_core_note_read(s->core, l, 0, d, l->size) != (ssize_t)l->size)
		goto out;
	count = d[0];
	if (count > (l->size - 16) / 24)
		goto out;
	for (uint64_t i = 0; i < count; i++)
		if (addr >= d[2 + 3 * i] && addr < d[3 + 3 * i])
			want = i;
	name = (const char *)(d + 2 + 3 * count);
	end = (const char *)d + l->size;
	for (uint64_t i = 0; want != (uint64_t)-1 && name < end; i++) {
		size_t len = strnlen(name, (size_t)(end - name));

		if (i == want && name + len < end) {
			btsdec_rsp_put(b, name, len);
			break;
		}
		name += len + 1;
	}
out:
	free(d);
}

static void make_exec_file(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *b)
{
	uint64_t entry;

	if (s->exe)
		btsdec_rsp_puts(b, s->exe);
	else if (btsdec_core_auxv(s->core, AT_ENTRY, &entry))
		nt_file_name(s, entry, b);
}

/* ---- Shared libraries: r_debug's list in the core's memory ---------------- */

#define LM_MAX		4096	/* link_map entries followed at most */
#define NAME_MAX_LEN	4096

static bool read_u64(struct btsdec_gdbstub *s, uint64_t addr, uint64_t *v)
{
	return stub_read_mem(s, addr, v, sizeof(*v)) == sizeof(*v);
}

/* The address of r_debug: DT_DEBUG in the program's dynamic section,
 * found through AT_PHDR/AT_PHNUM.  0 when not found. */
static uint64_t find_r_debug(struct btsdec_gdbstub *s)
{
	uint64_t phdr, phnum, bias = 0, dyn = 0;
	Elf64_Phdr ph;
	Elf64_Dyn d;

	if (!btsdec_core_auxv(s->core, AT_PHDR, &phdr) ||
	    !btsdec_core_auxv(s->core, AT_PHNUM, &phnum) ||
	    phnum > 1024)
		return 0;
	for (uint64_t i = 0; i < phnum; i++) {
		if (stub_read_mem(s, phdr + i * sizeof(ph), &ph, sizeof(ph)) != sizeof(ph))
			return 0;
		if (ph.p_type == PT_PHDR)
			bias = phdr - ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	for (uint64_t i = 0; dyn && i < LM_MAX; i++) {
		if (stub_read_mem(s, bias + dyn + i * sizeof(d), &d, sizeof(d)) != sizeof(d) ||
		    d.d_tag == DT_NULL)
			return 0;
		if (d.d_tag == DT_DEBUG)
			return d.d_un.d_ptr;
	}
	return 0;
}

/* s as XML attribute text. */
static void put_xml_text(struct btsdec_rsp_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': btsdec_rsp_puts(b, "&amp;"); break;
		case '<': btsdec_rsp_puts(b, "&lt;"); break;
		case '>': btsdec_rsp_puts(b, "&gt;"); break;
		case '"': btsdec_rsp_puts(b, "&quot;"); break;
		default:
			if ((unsigned char)*s < 0x20)
				btsdec_rsp_printf(b, "&#%d;", *s);
			else
				btsdec_rsp_put(b, s, 1);
		}
	}
}

/* ---- Threads ------------------------------------------------------------- */

/* The threads, faulting first, each with what qThreadExtraInfo says.  A
 * Linux core names only the process (NT_PRPSINFO's pr_fname: the thread
 * group leader's comm): the thread whose tid is the process's pid carries
 * it; the others' names are not in the core. */
pid_t stub_core_pid(struct btsdec_core *core)
{
	const struct btsdec_note_loc *l = btsdec_core_note(core, NT_PRPSINFO);
	pid_t pid = 0;

	if (!l || btsdec_core_note_read(core, l, offsetof(struct elf_prpsinfo, pr_pid),
					&pid, sizeof(pid)) != sizeof(pid))
		return 0;
	return pid;
}

static void make_threads(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *b)
{
	const struct btsdec_note_loc *l = btsdec_core_note(s->core, NT_PRPSINFO);
	char name[sizeof(((struct elf_prpsinfo *)0)->pr_fname) + 1] = "", text[160];
	pid_t pid = stub_core_pid(s->core);

	if (!l || btsdec_core_note_read(s->core, l, offsetof(struct elf_prpsinfo, pr_fname),
					name, sizeof(name) - 1) != sizeof(name) - 1)
		name[0] = '\0';
	btsdec_rsp_puts(b, "<?xml version=\"1.0\"?>\n<threads>\n");
	for (size_t i = 0; i < s->nr; i++) {
		btsdec_rsp_puts(b, "<thread id=\"");
		stub_put_thread_id(s, b, &s->t[i]);
		btsdec_rsp_puts(b, "\"");
		if (name[0] && s->t[i].th->tid == pid) {
			btsdec_rsp_puts(b, " name=\"");
			put_xml_text(b, name);
			btsdec_rsp_puts(b, "\"");
		}
		btsdec_rsp_puts(b, ">");
		stub_thread_text(&s->t[i], text, sizeof(text));
		put_xml_text(b, text);
		btsdec_rsp_puts(b, "</thread>\n");
	}
	btsdec_rsp_puts(b, "</threads>\n");
}

/* One link_map entry after the program's: a library with a name. */
static void put_library(struct btsdec_gdbstub *s, uint64_t lm, const uint64_t *f,
			struct btsdec_rsp_buf *b)
{
	char name[NAME_MAX_LEN];
	size_t got = stub_read_mem(s, f[1], name, sizeof(name) - 1);

	name[got] = '\0';
	if (!name[0])
		return;
	btsdec_rsp_puts(b, "<library name=\"");
	put_xml_text(b, name);
	btsdec_rsp_printf(b, "\" lm=\"0x%llx\" l_addr=\"0x%llx\" l_ld=\"0x%llx\" lmid=\"0x0\"/>",
			  (unsigned long long)lm, (unsigned long long)f[0],
			  (unsigned long long)f[2]);
}

static void make_libraries(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *b)
{
	uint64_t r_debug = find_r_debug(s), lm = 0, main_lm = 0, f[4];

	if (r_debug && read_u64(s, r_debug + offsetof(struct r_debug, r_map), &lm))
		main_lm = lm;
	btsdec_rsp_printf(b, "<library-list-svr4 version=\"1.0\" main-lm=\"0x%llx\">",
			  (unsigned long long)main_lm);
	for (size_t i = 0; lm && i < LM_MAX; i++) {
		if (stub_read_mem(s, lm, f, sizeof(f)) != sizeof(f))
			break;	/* l_addr, l_name, l_ld, l_next */
		if (i)
			put_library(s, lm, f, b);
		lm = f[3];
	}
	btsdec_rsp_puts(b, "</library-list-svr4>");
}

/* ---- Branch traces: gdb's BTS blocks from a trace note --------------------- */

/* A block of gdb's BTS trace (btsdec_blocks_walk's callback). */
static void put_block(void *arg, uint64_t begin, uint64_t end)
{
	btsdec_rsp_printf(arg, "<block begin=\"0x%llx\" end=\"0x%llx\"/>\n",
			  (unsigned long long)begin, (unsigned long long)end);
}

/* With a buffer size from gdb, only the newest records that fit. */
static void make_blocks(struct btsdec_gdbstub *s, const struct btsdec_thread *th,
			struct btsdec_rsp_buf *b)
{
	size_t keep = s->bts_size ? s->bts_size / sizeof(struct bts_record) : SIZE_MAX;

	btsdec_blocks_walk(&s->blocks, th, keep, put_block, b);
}

static void make_btrace(struct btsdec_gdbstub *s, struct stub_thread *t,
			struct btsdec_rsp_buf *b)
{
	btsdec_rsp_puts(b, "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n");
	if (t->th->has_trace)
		make_blocks(s, t->th, b);
	btsdec_rsp_puts(b, "</btrace>\n");
}

/* The current thread's configuration: BTS with the ring's size (or gdb's
 * buffer size when smaller) while tracing is on, none while it is off
 * (so gdb connecting finds no recording and `record btrace bts` sends
 * its buffer size first). */
static void make_btrace_conf(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *b)
{
	const struct stub_thread *t = &s->t[s->cur];
	uint64_t size = t->th->trace.capacity * sizeof(struct bts_record);

	if (s->bts_size && s->bts_size < size)
		size = s->bts_size;
	btsdec_rsp_puts(b, "<btrace-conf version=\"1.0\">");
	if (t->btrace_on)
		btsdec_rsp_printf(b, "<bts size=\"0x%llx\"/>", (unsigned long long)size);
	btsdec_rsp_puts(b, "</btrace-conf>");
}

/* "all" gives the whole trace; so does "new" until it went out once (the
 * trace never changes), nothing new after.  "delta" before that is
 * refused: gdb then reads "new" (a delta would be stitched to the one
 * instruction gdb notes on enabling). */
static int btrace_object(struct btsdec_gdbstub *s, const char *annex,
			 uint64_t off, const char **data, size_t *len)
{
	struct stub_thread *t = &s->t[s->cur];
	static const char none[] = "<btrace version=\"1.0\">\n</btrace>\n";
	bool all = !strcmp(annex, "all"), delta = !strcmp(annex, "delta");

	if (!t->btrace_on)
		return -ENODATA;
	if (!all && !delta && strcmp(annex, "new"))
		return -EINVAL;
	if (!all && t->btrace_sent && off == 0) {
		*data = none;
		*len = sizeof(none) - 1;
		return 0;
	}
	if (delta && off == 0)
		return -ESRCH;
	t->btrace_sent = true;
	if (!t->btrace) {
		struct btsdec_rsp_buf b = { 0 };

		make_btrace(s, t, &b);
		if (b.err || (t->th->has_trace && btsdec_trace_error(&t->th->trace))) {
			btsdec_rsp_buf_free(&b);
			return b.err ? b.err : -EIO;
		}
		t->btrace = b.p;
		t->btrace_len = b.len;
	}
	*data = t->btrace;
	*len = t->btrace_len;
	return 0;
}

/* Makes the object named by `object`/`annex` (from offset 0 anew; a
 * read at a later offset continues the one made then) into s->obj or
 * *data.  0, -ENOENT (no such object: empty reply), or an error. */
static int make_object(struct btsdec_gdbstub *s, const char *object,
		       const char *annex, uint64_t off, const char **data, size_t *len)
{
	struct btsdec_rsp_buf *b = &s->obj;

	if (!strcmp(object, "btrace"))
		return btrace_object(s, annex, off, data, len);
	if (off == 0) {
		btsdec_rsp_buf_reset(b);
		if (!strcmp(object, "features") && !strcmp(annex, "target.xml"))
			make_tdesc(s, b);
		else if (!strcmp(object, "auxv") && !*annex)
			make_auxv(s, b);
		else if (!strcmp(object, "exec-file"))
			make_exec_file(s, b);
		else if (!strcmp(object, "libraries-svr4") && !*annex)
			make_libraries(s, b);
		else if (!strcmp(object, "threads") && !*annex)
			make_threads(s, b);
		else if (!strcmp(object, "btrace-conf") && !*annex)
			make_btrace_conf(s, b);
		else if (!strcmp(object, "features") || !strcmp(object, "auxv") ||
			 !strcmp(object, "libraries-svr4") || !strcmp(object, "btrace-conf") ||
			 !strcmp(object, "threads"))
			return -EINVAL;
		else
			return -ENOENT;
	}
	*data = b->p ? b->p : "";
	*len = b->len;
	return b->err;
}

int stub_xfer(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	char object[32], annex[64];
	const char *data = NULL;
	uint64_t off, len;
	size_t n, size = 0;
	int ret;

	n = strcspn(a, ":");
	if (n >= sizeof(object) || strncmp(a + n, ":read:", 6))
		return btsdec_rsp_puts(r, a[n] ? "E.only qXfer reads are served" : ""), 0;
	memcpy(object, a, n);
	object[n] = '\0';
	a += n + 6;
	n = strcspn(a, ":");
	if (n >= sizeof(annex) || a[n] != ':')
		return btsdec_rsp_puts(r, "E.malformed qXfer annex"), 0;
	memcpy(annex, a, n);
	annex[n] = '\0';
	a += n + 1;
	if (btsdec_rsp_hex_u64(&a, &off) || *a++ != ',' ||
	    btsdec_rsp_hex_u64(&a, &len) || *a)
		return btsdec_rsp_puts(r, "E.malformed qXfer offset or length"), 0;
	ret = make_object(s, object, annex, off, &data, &size);
	if (ret == -ENOENT)
		return 0;
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return btsdec_rsp_puts(r, ret == -ENODATA ?
			"E.branch tracing is not enabled for this thread" :
			ret == -EIO ? "E.the trace note cannot be read from the core" :
			ret == -ESRCH ? "E.no delta before the whole trace" :
			"E.no such qXfer annex"), 0;
	if (off >= size)
		return btsdec_rsp_puts(r, "l"), 0;
	if (len > size - off)
		len = size - off;
	if (len > BTSDEC_RSP_PACKET_MAX / 2)
		len = BTSDEC_RSP_PACKET_MAX / 2;	/* escapes may double it */
	btsdec_rsp_put(r, off + len < size ? "m" : "l", 1);
	btsdec_rsp_put(r, data + off, len);
	return r->err;
}
