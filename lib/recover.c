// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The value-recovery engine (btsdec-recover.h): one state of registers per
 * instruction of a thread's sequence, memory found on demand along it,
 * and the fixed point of backward and forward steps (recover-insn.c).
 * Read by the renderers and the gdb stub; process context, one thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/user.h>

#include "recover-int.h"

/* Passes of backward then forward steps before giving up on a fixed
 * point (each pass only adds proven bits; real code settles in a few). */
#define MAX_PASSES 64
/* Straight code a block may hold, as btsdec_run_relate walks it. */
#define MAX_BLOCK (64 * 1024)
#define MAX_INSN 15

static const char *const reg_names[NREG] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
};

const char *btsdec_reg_name(enum btsdec_reg r)
{
	return r < NREG ? reg_names[r] : "?";
}

int btsdec_recover_new(const struct btsdec_regs *final, btsdec_recover_read_fn read,
		       void *arg, struct btsdec_recover **out, struct btsdec_err *err)
{
	struct btsdec_recover *r = calloc(1, sizeof(*r));

	if (!r)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &r->cs) != CS_ERR_OK) {
		free(r);
		return btsdec_fail(err, -ENOSYS, "cs_open: capstone without x86");
	}
	cs_option(r->cs, CS_OPT_DETAIL, CS_OPT_ON);
	r->ci = cs_malloc(r->cs);
	if (!r->ci) {
		btsdec_recover_free(r);
		return btsdec_fail(err, -ENOMEM, "cs_malloc: out of memory");
	}
	r->final = *final;
	r->read = read;
	r->arg = arg;
	r->mem_hi = ~0ull;
	*out = r;
	return 0;
}

void btsdec_recover_free(struct btsdec_recover *r)
{
	if (!r)
		return;
	if (r->ci)
		cs_free(r->ci, 1);
	cs_close(&r->cs);
	free(r->in);
	free(r->s);
	free(r->ev);
	free(r->bar);
	free(r);
}

void btsdec_recover_limit_mem(struct btsdec_recover *r, uint64_t lo, uint64_t hi)
{
	r->mem_lo = lo;
	r->mem_hi = hi;
}

/* Room for one more instruction; results of an earlier run are dropped
 * (btsdec_recover_run again). */
static struct xinsn *append(struct btsdec_recover *r)
{
	free(r->s);
	r->s = NULL;
	if (r->nr == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct xinsn *n = realloc(r->in, cap * sizeof(*n));

		if (!n)
			return NULL;
		r->in = n;
		r->cap = cap;
	}
	return &r->in[r->nr];
}

int btsdec_recover_add_gap(struct btsdec_recover *r)
{
	struct xinsn *x = append(r);

	if (!x)
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	x->sem = S_GAP;
	x->store = ST_ANY;
	for (int k = 0; k < NREG; k++)
		x->wmask[k] = ~0ull;
	r->nr++;
	return 0;
}

int btsdec_recover_add_fault(struct btsdec_recover *r, uint64_t addr,
			     const uint8_t *code, size_t len)
{
	static const int steps[] = { BTSDEC_REG_RAX, BTSDEC_REG_RCX, BTSDEC_REG_RSI,
				     BTSDEC_REG_RDI };
	struct xinsn *x;
	uint8_t size;

	if (!rec_partial(r, addr, code, len, &size))
		return 0;
	if (!(x = append(r)))
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	x->addr = addr;
	x->len = size;
	x->sem = S_OTHER;
	x->store = ST_ANY;
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++)
		x->wmask[steps[k]] = ~0ull;
	x->wmask[RIP] = ~0ull;
	x->wmask[RFL] = F_ARITH | F_RF;
	r->nr++;
	return 1;
}

int btsdec_recover_add(struct btsdec_recover *r, uint64_t addr,
		       const uint8_t *code, size_t len)
{
	struct xinsn *x = append(r);
	int n;

	if (!x)
		return -ENOMEM;
	n = rec_decode(r, addr, code, len, x);
	if (n < 0)
		return btsdec_recover_add_gap(r) ? -ENOMEM : n;
	r->nr++;
	return n;
}

size_t btsdec_recover_nr(const struct btsdec_recover *r)
{
	return r->nr;
}

size_t btsdec_recover_conflicts(const struct btsdec_recover *r)
{
	return r->conflicts;
}

int btsdec_recover_insn(const struct btsdec_recover *r, size_t i, uint64_t *addr)
{
	if (i >= r->nr)
		return -ERANGE;
	if (r->in[i].sem == S_GAP)
		return -ENODATA;
	*addr = r->in[i].addr;
	return 0;
}

/* ---- Memory --------------------------------------------------------------- */

/* What instruction j shows of the byte at addr. */
enum look {
	LOOK_ON,	/* nothing: look further */
	LOOK_KNOWN,	/* *byte */
	LOOK_UNKNOWN,	/* a write that may alias it: stop */
};

/* Seen from after it: its store (which came last), then its load. */
static enum look back_at(const struct btsdec_recover *r, size_t j, uint64_t addr,
			 uint8_t *byte)
{
	const struct xinsn *x = &r->in[j];
	uint64_t a, off;
	unsigned size;

	if (x->sem == S_GAP)
		return LOOK_UNKNOWN;
	switch (rec_store_at(r, j, &a, &size)) {
	case ST_ANY:
		return LOOK_UNKNOWN;
	case ST_OP:
		if (addr - a >= size)
			break;
		off = x->sem == S_STOS ? (addr - a) % x->st_size : addr - a;
		/* an unmodelled store may be wider than the bytes kept */
		if (off >= sizeof(x->st) || !(x->st_known >> off & 1))
			return LOOK_UNKNOWN;
		*byte = x->st[off];
		return LOOK_KNOWN;
	default:
		break;
	}
	return rec_loaded_byte(r, j, addr, byte) ? LOOK_KNOWN : LOOK_ON;
}

/* Seen from before it: its load, then its store. */
static enum look ahead_at(const struct btsdec_recover *r, size_t j, uint64_t addr,
			  uint8_t *byte)
{
	uint64_t a;
	unsigned size;

	if (r->in[j].sem == S_GAP)
		return LOOK_UNKNOWN;
	if (rec_loaded_byte(r, j, addr, byte))
		return LOOK_KNOWN;
	switch (rec_store_at(r, j, &a, &size)) {
	case ST_ANY:
		return LOOK_UNKNOWN;
	case ST_OP:
		return addr - a < size ? LOOK_UNKNOWN : LOOK_ON;
	default:
		return LOOK_ON;
	}
}

/* ---- The index of accesses ------------------------------------------------ */

static int ev_cmp(const void *pa, const void *pb)
{
	const struct mem_ev *a = pa, *b = pb;

	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return a->j < b->j ? -1 : a->j > b->j;
}

static int add_ev(struct btsdec_recover *r, uint64_t addr, unsigned size, size_t j)
{
	for (uint64_t g = addr >> 3; size && g <= (addr + size - 1) >> 3; g++) {
		if (r->nr_ev == r->cap_ev) {
			size_t cap = r->cap_ev ? 2 * r->cap_ev : 1024;
			struct mem_ev *n = realloc(r->ev, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			r->ev = n;
			r->cap_ev = cap;
		}
		r->ev[r->nr_ev++] = (struct mem_ev){ g, j };
		if (g == UINT64_MAX >> 3)
			break;
	}
	return 0;
}

static int add_bar(struct btsdec_recover *r, size_t j)
{
	if (r->nr_bar == r->cap_bar) {
		size_t cap = r->cap_bar ? 2 * r->cap_bar : 256;
		size_t *n = realloc(r->bar, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->bar = n;
		r->cap_bar = cap;
	}
	r->bar[r->nr_bar++] = j;
	return 0;
}

/* Indexes every access at an address the states know now.  0 or -ENOMEM. */
static int index_build(struct btsdec_recover *r)
{
	uint64_t a;
	unsigned size;
	int rc = 0;

	r->nr_ev = r->nr_bar = 0;
	for (size_t j = 0; j < r->nr && !rc; j++) {
		enum store st = r->in[j].sem == S_GAP ? ST_ANY : rec_store_at(r, j, &a, &size);

		if (st == ST_ANY)
			rc = add_bar(r, j);
		else if (st == ST_OP)
			rc = add_ev(r, a, size, j);
		if (!rc && r->in[j].sem != S_GAP && rec_load_at(r, j, &a, &size))
			rc = add_ev(r, a, size, j);
	}
	if (!rc && r->nr_ev)
		qsort(r->ev, r->nr_ev, sizeof(*r->ev), ev_cmp);
	return rc;
}

/* The first barrier at or after instruction i (nr_bar if none). */
static size_t bar_from(const struct btsdec_recover *r, size_t i)
{
	size_t lo = 0, hi = r->nr_bar;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->bar[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first access of granule g by instruction i or later. */
static size_t ev_from(const struct btsdec_recover *r, uint64_t g, size_t i)
{
	struct mem_ev key = { g, i };
	size_t lo = 0, hi = r->nr_ev;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ev_cmp(&r->ev[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The byte at addr before instruction i, looking back to the newest
 * store or load that proves it (a write that may alias ends the look). */
static bool byte_before(const struct btsdec_recover *r, size_t i, uint64_t addr,
			uint8_t *byte)
{
	size_t p = bar_from(r, i), k = ev_from(r, addr >> 3, i);
	enum look l;

	while (k-- > 0 && r->ev[k].g == addr >> 3 && (!p || r->ev[k].j > r->bar[p - 1]))
		if ((l = back_at(r, r->ev[k].j, addr, byte)) != LOOK_ON)
			return l == LOOK_KNOWN;
	return false;
}

/* The same, looking forward to the oldest load that proves it, or to the
 * final image, before any write that may alias. */
static bool byte_after(const struct btsdec_recover *r, size_t i, uint64_t addr,
		       uint8_t *byte)
{
	size_t p = bar_from(r, i), k = ev_from(r, addr >> 3, i);
	enum look l;

	for (; k < r->nr_ev && r->ev[k].g == addr >> 3 &&
	       (p == r->nr_bar || r->ev[k].j < r->bar[p]); k++)
		if ((l = ahead_at(r, r->ev[k].j, addr, byte)) != LOOK_ON)
			return l == LOOK_KNOWN;
	if (p < r->nr_bar)	/* its load may still prove it */
		return ahead_at(r, r->bar[p], addr, byte) == LOOK_KNOWN;
	return r->read && r->read(r->arg, addr, byte, 1) == 1;
}

static bool mem_byte(const struct btsdec_recover *r, size_t i, uint64_t addr,
		     uint8_t *byte)
{
	if (addr < r->mem_lo || addr >= r->mem_hi)
		return false;
	return byte_before(r, i, addr, byte) || byte_after(r, i, addr, byte);
}

struct rval rec_mem(const struct btsdec_recover *r, size_t i, uint64_t addr,
		    unsigned size)
{
	struct rval v = { 0, 0 };
	uint8_t b;

	for (unsigned k = 0; k < size && k < 8; k++)
		if (mem_byte(r, i, addr + k, &b)) {
			v.v |= (uint64_t)b << 8 * k;
			v.k |= 0xffull << 8 * k;
		}
	return v;
}

enum store rec_mem_writer(const struct btsdec_recover *r, size_t i, uint64_t addr,
			  size_t *j)
{
	size_t p = bar_from(r, i), k = ev_from(r, addr >> 3, i);
	uint64_t a;
	unsigned size;

	for (; k-- > 0 && r->ev[k].g == addr >> 3 && (!p || r->ev[k].j > r->bar[p - 1]);)
		if (r->in[r->ev[k].j].sem != S_GAP &&
		    rec_store_at(r, r->ev[k].j, &a, &size) == ST_OP && addr - a < size) {
			*j = r->ev[k].j;
			return ST_OP;
		}
	if (!p)
		return ST_NONE;
	*j = r->bar[p - 1];
	return ST_ANY;
}

/* ---- The fixed point ------------------------------------------------------ */

/* Adds what src proves to dst: whether anything was new.  Bits proven
 * both ways and different are conflicts, counted when count is set. */
static bool merge(struct btsdec_recover *r, struct rval *dst, const struct rval *src,
		  bool count)
{
	bool changed = false;

	for (int k = 0; k < NREG; k++) {
		uint64_t add = src[k].k & ~dst[k].k;

		if (count)
			r->conflicts += __builtin_popcountll(src[k].k & dst[k].k &
							     (src[k].v ^ dst[k].v));
		if (!add)
			continue;
		dst[k].v = (dst[k].v & dst[k].k) | (src[k].v & add);
		dst[k].k |= add;
		changed = true;
	}
	return changed;
}

static bool pass(struct btsdec_recover *r, bool count)
{
	struct rval out[NREG];
	bool changed = false;

	for (size_t i = r->nr; i-- > 0;) {
		uint8_t ld = r->in[i].ld_known;

		if (r->in[i].sem == S_GAP)
			continue;
		rec_backward(r, i, out);
		changed |= merge(r, state(r, i), out, count) || r->in[i].ld_known != ld;
	}
	for (size_t i = 0; i < r->nr; i++) {
		if (r->in[i].sem == S_GAP)
			continue;
		rec_forward(r, i, out);
		changed |= merge(r, state(r, i + 1), out, count);
	}
	return changed;
}

int btsdec_recover_run(struct btsdec_recover *r)
{
	struct rval *fin;

	free(r->s);
	r->s = calloc((r->nr + 1) * NREG, sizeof(*r->s));
	if (!r->s)
		return -ENOMEM;
	fin = state(r, r->nr);
	for (int k = 0; k < NREG; k++)
		fin[k] = (struct rval){ r->final.val[k] & r->final.known[k], r->final.known[k] };
	for (size_t i = 0; i < r->nr; i++)
		if (r->in[i].sem != S_GAP)
			state(r, i)[RIP] = (struct rval){ r->in[i].addr, ~0ull };
	for (int n = 0; n < MAX_PASSES; n++) {
		if (index_build(r))
			return -ENOMEM;
		if (!pass(r, false))
			break;
	}
	r->conflicts = 0;
	pass(r, true);
	return index_build(r);	/* for the readers: what the states know */
}

/* ---- Reading -------------------------------------------------------------- */

int btsdec_recover_regs_at(const struct btsdec_recover *r, size_t i,
			   struct btsdec_regs *out)
{
	const struct rval *st;

	if (i > r->nr || !r->s)
		return -ERANGE;
	st = state(r, i);
	for (int k = 0; k < NREG; k++) {
		out->val[k] = st[k].v & st[k].k;
		out->known[k] = st[k].k;
	}
	return 0;
}

ssize_t btsdec_recover_mem_at(const struct btsdec_recover *r, size_t i,
			      uint64_t addr, size_t len, uint8_t *buf, bool *known)
{
	ssize_t n = 0;

	if (i > r->nr || !r->s)
		return -ERANGE;
	for (size_t k = 0; k < len; k++) {
		known[k] = mem_byte(r, i, addr + k, &buf[k]);
		if (!known[k])
			buf[k] = 0;
		n += known[k];
	}
	return n;
}

int btsdec_recover_store(const struct btsdec_recover *r, size_t i,
			 uint64_t *addr, size_t *len)
{
	unsigned size;

	if (i >= r->nr || !r->s)
		return -ERANGE;
	*addr = 0;
	*len = 0;
	if (r->in[i].sem == S_GAP)
		return -ENODATA;
	switch (rec_store_at(r, i, addr, &size)) {
	case ST_NONE:
		*addr = 0;
		return 0;
	case ST_OP:
		*len = size;
		return 0;
	default:
		return -ENODATA;
	}
}

/* Appends [a, a + n) to the accesses: false when they are full. */
static bool add_access(uint64_t a, size_t n, uint64_t *addr, size_t *len, int *nr)
{
	if (*nr == BTSDEC_RECOVER_MAX_ACCESS)
		return false;
	addr[*nr] = a;
	len[(*nr)++] = n;
	return true;
}

int btsdec_recover_access(const struct btsdec_recover *r, size_t i,
			  uint64_t *addr, size_t *len)
{
	const struct xinsn *x;
	uint64_t a;
	size_t n;
	unsigned size;
	int nr = 0, ret;

	if (i >= r->nr || !r->s)
		return -ERANGE;
	x = &r->in[i];
	/* the kernel's accesses, a string's source: not followed */
	if (x->sem == S_SYSCALL || x->sem == S_MOVS)
		return -ENODATA;
	if ((ret = btsdec_recover_store(r, i, &a, &n)))
		return ret;
	if (n)
		add_access(a, n, addr, len, &nr);
	/* an unmodelled instruction's memory operand is its store above */
	for (unsigned k = 0; x->sem != S_OTHER && x->sem != S_LEA && x->sem != S_NOP &&
	     k < x->nops; k++) {
		if (x->op[k].kind != OP_MEM)
			continue;
		if (!rec_addr(r, x, &x->op[k], state(r, i), &a) ||
		    !add_access(a, x->op[k].size, addr, len, &nr))
			return -ENODATA;
	}
	if (x->load == LD_RSP || x->load == LD_RBP) {
		if (!rec_load_at(r, i, &a, &size) || !add_access(a, size, addr, len, &nr))
			return -ENODATA;
	}
	return nr;
}

/* ---- From a core ---------------------------------------------------------- */

struct seq {
	struct btsdec_recover *r;
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;
	uint64_t (*blocks)[2];
	size_t nr, cap;
	bool failed;
};

static void on_block(void *arg, uint64_t begin, uint64_t end)
{
	struct seq *q = arg;

	if (q->nr == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 64;
		void *n = realloc(q->blocks, cap * sizeof(*q->blocks));

		if (!n) {
			q->failed = true;
			return;
		}
		q->blocks = n;
		q->cap = cap;
	}
	q->blocks[q->nr][0] = begin;
	q->blocks[q->nr][1] = end;
	q->nr++;
}

/* Walks block [begin, end] (end itself only when it ran: last false) as
 * entries of the sequence: its instructions, a gap where its code cannot
 * be read straight.  Appends them when add, else only counts them (their
 * lengths from the classifier's capstone).  The entries, or -ENOMEM. */
static long walk_block(struct seq *q, uint64_t begin, uint64_t end, bool last, bool add)
{
	uint8_t code[MAX_INSN];
	uint64_t a = begin;
	long nr = 0;
	size_t got, size;
	bool ind;
	int n;

	if (!end && begin)	/* a gap; (0, 0) is a jump to 0 that faulted */
		return add && btsdec_recover_add_gap(q->r) ? -ENOMEM : 1;
	for (; a - begin <= MAX_BLOCK && a <= end; nr++, a += n) {
		if (a == end && last)
			return nr;
		got = btsdec_sym_read_code(q->sym, a, code, sizeof(code));
		if (add) {
			n = btsdec_recover_add(q->r, a, code, got);
		} else {
			btsdec_classify_insn(q->cls, code, got, a, &ind, &size);
			n = size ? (int)size : -EINVAL;
		}
		if (n < 0)	/* not decoded: added as a gap */
			return n == -EINVAL ? nr + 1 : n;
		if (a == end)
			return nr + 1;
	}
	return add && btsdec_recover_add_gap(q->r) ? -ENOMEM : nr + 1;
}

static size_t read_sym(void *arg, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0, got;

	while (done < len && addr + done >= addr) {
		got = btsdec_sym_read_code(arg, addr + done, (uint8_t *)buf + done, len - done);
		if (!got)
			break;
		done += got;
	}
	return done;
}

static int final_regs(struct btsdec_core *core, const struct btsdec_thread *th,
		      struct btsdec_regs *f)
{
#define U(n) offsetof(struct user_regs_struct, n)
	static const uint16_t off[NREG] = {
		U(rax), U(rbx), U(rcx), U(rdx), U(rsi), U(rdi), U(rbp), U(rsp),
		U(r8), U(r9), U(r10), U(r11), U(r12), U(r13), U(r14), U(r15),
		U(rip), U(eflags),
	};
#undef U
	struct user_regs_struct u;

	if (!th->has_regs || btsdec_core_note_read(core, &th->prstatus,
			offsetof(struct elf_prstatus, pr_reg), &u, sizeof(u)) != sizeof(u))
		return -ENODATA;
	for (int k = 0; k < NREG; k++) {
		memcpy(&f->val[k], (const uint8_t *)&u + off[k], 8);
		f->known[k] = ~0ull;
	}
	return 0;
}

static int build(struct btsdec_core *core, struct btsdec_sym *sym,
		 struct btsdec_classifier *cls, const struct btsdec_thread *th,
		 struct btsdec_recover *r)
{
	struct btsdec_blocks bw;
	struct seq q = { .r = r, .sym = sym, .cls = cls };
	uint8_t code[MAX_INSN];
	size_t keep = 0, total = 0;
	uint64_t lo, hi;
	long n = 0;

	if (btsdec_core_nr_threads(core) > 1) {
		/* another thread may write anything but this one's stack */
		if (btsdec_core_segment(core, r->final.val[RSP], &lo, &hi))
			btsdec_recover_limit_mem(r, lo, hi);
		else
			btsdec_recover_limit_mem(r, 0, 0);
	}
	btsdec_blocks_init(&bw, sym, cls);
	btsdec_blocks_walk(&bw, th, SIZE_MAX, on_block, &q);
	btsdec_blocks_fini(&bw);
	if (q.failed)
		n = -ENOMEM;
	/* the newest blocks that fit, added oldest first */
	for (; n >= 0 && keep < q.nr; keep++) {
		n = walk_block(&q, q.blocks[keep][0], q.blocks[keep][1], keep == 0, false);
		if (n < 0 || total + n > BTSDEC_RECOVER_MAX_INSNS)
			break;
		total += n;
	}
	for (size_t k = keep; n >= 0 && k-- > 0;)
		n = walk_block(&q, q.blocks[k][0], q.blocks[k][1], k == 0, true);
	free(q.blocks);
	if (n >= 0)	/* stopped part-way through a rep movs, say */
		n = btsdec_recover_add_fault(r, th->pc, code,
					     btsdec_sym_read_code(sym, th->pc, code, sizeof(code)));
	return n < 0 ? (int)n : btsdec_recover_run(r);
}

int btsdec_recover_open(struct btsdec_core *core, struct btsdec_sym *sym,
			struct btsdec_classifier *cls,
			const struct btsdec_thread *th,
			struct btsdec_recover **out, struct btsdec_err *err)
{
	struct btsdec_regs f;
	struct btsdec_recover *r;
	int rc;

	if (!th->has_trace || final_regs(core, th, &f))
		return btsdec_fail(err, -ENODATA, "thread %d: no trace or no registers",
				   (int)th->tid);
	rc = btsdec_recover_new(&f, read_sym, sym, &r, err);
	if (rc)
		return rc;
	rc = build(core, sym, cls, th, r);
	if (rc) {
		btsdec_recover_free(r);
		return btsdec_fail(err, rc, "thread %d: out of memory", (int)th->tid);
	}
	*out = r;
	return 0;
}
