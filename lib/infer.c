// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one branch a filtered trail may lack, proven from the core: perf's
 * filter of Intel's model-specific LBR drops a branch to 0, so a call
 * through a NULL pointer ends the note one branch early.  When the core
 * proves where the code after the newest branch went (btsdec_fault_infer),
 * the fault gets that branch, marked inferred; nothing is guessed.  Its
 * interface is btsdec-infer.h; model.c calls it once per faulting thread,
 * and the renderers read the result (btsdec_thread_branch).  Process
 * context.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/user.h>

#include "btsdec.h"

#define MAX_INSN	16

/* Where each of btsdec_insn_env.gpr lies in NT_PRSTATUS's pr_reg. */
#define PR_REG(r)	(offsetof(struct elf_prstatus, pr_reg) + \
			 offsetof(struct user_regs_struct, r))
static const size_t gpr_off[BTSDEC_NR_GPR] = {
	PR_REG(rax), PR_REG(rcx), PR_REG(rdx), PR_REG(rbx),
	PR_REG(rsp), PR_REG(rbp), PR_REG(rsi), PR_REG(rdi),
	PR_REG(r8), PR_REG(r9), PR_REG(r10), PR_REG(r11),
	PR_REG(r12), PR_REG(r13), PR_REG(r14), PR_REG(r15),
};

/* The core's memory, but for the slot a call wrote its return address
 * to: what the operand read there before is gone. */
struct infer_mem {
	struct btsdec_core *core;
	uint64_t pushed;	/* the slot's address; 0: none */
};

static size_t infer_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct infer_mem *m = arg;

	if (m->pushed && addr < m->pushed + 8 && m->pushed < addr + len)
		return 0;
	return btsdec_core_read(m->core, addr, buf, len);
}

/* The registers of th from its NT_PRSTATUS: 0, or -EIO. */
static int read_gpr(struct btsdec_core *core, const struct btsdec_thread *th,
		    uint64_t gpr[BTSDEC_NR_GPR])
{
	for (int i = 0; i < BTSDEC_NR_GPR; i++)
		if (btsdec_core_note_read(core, &th->prstatus, gpr_off[i], &gpr[i],
					  sizeof(gpr[i])) != sizeof(gpr[i]))
			return -EIO;
	return 0;
}

/* Whether the thread died fetching pc: the kernel's SIGSEGV or SIGBUS
 * with si_addr == pc.  Then no instruction ran after the branch to pc,
 * and the core's registers are the ones that branch left. */
static bool fetch_fault(const struct btsdec_thread *th, uint64_t pc)
{
	return (th->signo == SIGSEGV || th->signo == SIGBUS) && th->has_addr &&
	       th->addr == pc;
}

/* Whether recording stopped after the newest branch (a gap or suspend
 * marker follows it): the code after its target may have run unseen. */
static bool stopped_after(const struct btsdec_decoded *d, size_t newest)
{
	for (size_t i = newest + 1; i < d->nr; i++) {
		uint64_t mark = btsdec_trace_at(d->t, i).from;

		if (BTS_MARKER_KIND(mark) == BTS_MARK_GAP ||
		    BTS_MARKER_KIND(mark) == BTS_MARK_SUSPEND)
			return true;
	}
	return false;
}

/* The branch from `at` to f->pc, made f's relation. */
static void infer_branch(struct btsdec_sym *sym, const struct btsdec_decoded *d,
			 bool symbols, uint64_t at, enum btsdec_kind kind,
			 bool indirect, struct btsdec_fault *f)
{
	struct btsdec_branch *b = &f->infer, newest;

	btsdec_decoded_branch(d, f->branch, &newest);
	*b = (struct btsdec_branch){
		.rec = { .from = at, .to = f->pc }, .kind = kind, .indirect = indirect,
		.inferred = true, .depth = newest.depth + (kind == BTSDEC_K_CALL),
	};
	if (sym && symbols) {
		btsdec_sym_lookup(sym, at, &b->from_loc);
		btsdec_sym_lookup(sym, f->pc, &b->to_loc);
	}
	f->inferred = true;
	f->rel = BTSDEC_FAULT_TARGET;
	f->branch = d->nr;
}

void btsdec_fault_infer(struct btsdec_core *core, const struct btsdec_thread *th,
			struct btsdec_sym *sym, struct btsdec_classifier *cls,
			const struct btsdec_decoded *d, bool symbols,
			struct btsdec_fault *f)
{
	struct infer_mem mem = { .core = core };
	struct btsdec_insn_env env = { .read = infer_read, .arg = &mem };
	uint8_t code[MAX_INSN];
	enum btsdec_kind kind;
	uint64_t at, target, ret;
	size_t n, size;
	bool ind;

	if (f->rel != BTSDEC_FAULT_UNRELATED || !fetch_fault(th, f->pc) ||
	    stopped_after(d, f->branch) || read_gpr(core, th, env.gpr))
		return;
	at = btsdec_run_exit(sym, cls, btsdec_trace_at(d->t, f->branch).to, &kind);
	if (!at || (kind != BTSDEC_K_CALL && kind != BTSDEC_K_JUMP))
		return;
	if (kind == BTSDEC_K_CALL) {	/* the operand saw rsp before the push */
		mem.pushed = env.gpr[BTSDEC_GPR_RSP];
		env.gpr[BTSDEC_GPR_RSP] += 8;
	}
	n = btsdec_sym_read_code(sym, at, code, sizeof(code));
	if (btsdec_branch_target(cls, code, n, at, &env, &target, &size) || target != f->pc)
		return;
	if (kind == BTSDEC_K_CALL &&
	    (btsdec_core_read(core, mem.pushed, &ret, sizeof(ret)) != sizeof(ret) ||
	     ret != at + size))
		return;		/* no return address of this call at rsp */
	btsdec_classify_insn(cls, code, n, at, &ind, &size);	/* call*, jump* */
	infer_branch(sym, d, symbols, at, kind, ind, f);
}
