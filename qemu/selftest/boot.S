/*
 * Bare-metal self-test of the BTS and LBR models (32-bit protected mode,
 * multiboot).  The branch sequences whose records and LBR entries are
 * checked, and the interrupt handlers.  Every label a record names is
 * global, for test.c.  Each sequence takes the IA32_DEBUGCTL value to turn
 * tracing on with (TR|BTS, LBR, or both) and turns it off at its end; the
 * MSR it writes is trace_msr (IA32_DEBUGCTL, or AMD's DBG_EXTN_CFG for
 * LbrExtV2, test.c sets it).
 */
#define DEBUGCTL 0x1d9

	.section .multiboot, "a"
	.align 4
	.long 0x1BADB002
	.long 0
	.long -(0x1BADB002)

	.text
	.globl _start
_start:
	mov $stack_top, %esp
	push %ebx
	call main
1:	cli
	hlt
	jmp 1b

/* void load_segments(void): after lgdt, reload CS and the data segments */
	.globl load_segments
load_segments:
	ljmp $0x08, $1f
1:	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %ax, %fs
	mov %ax, %gs
	ret

/* BTS on: wrmsr(trace_msr, %eax); clobbers ecx, edx */
.macro bts_on
	xor %edx, %edx
	mov trace_msr, %ecx
	wrmsr
.endm
.macro bts_off
	xor %eax, %eax
	xor %edx, %edx
	mov trace_msr, %ecx
	wrmsr
.endm

	.data
	.globl trace_msr
trace_msr:
	.long DEBUGCTL
/* the MSR pmu_seq turns counting on with: IA32_PERF_GLOBAL_CTRL or AMD's PerfCntrGlobalCtl */
	.globl pmu_ctrl_msr
pmu_ctrl_msr:
	.long 0x38f
	.text

#define G(x) .globl x; x:

/* void seq_b(uint32_t debugctl): one of each branch kind */
	.globl seq_b
seq_b:
	push %ebx
	mov 8(%esp), %eax
	bts_on
G(b_j1)	jmp b_t1
G(b_t1)	xor %eax, %eax
G(b_jz)	jz b_t2
	nop
G(b_t2)
G(b_jnz) jnz b_t3			/* not taken: no record */
G(b_t3)
G(b_call) call b_fn
G(b_ret_to)
	mov $3, %ecx
G(b_loop) loop b_loop			/* taken twice, then falls through */
G(b_jecxz) jecxz b_t4
G(b_t4)	mov $b_t5, %eax
G(b_jind) jmp *%eax
G(b_t5)	mov $b_fn, %eax
G(b_cind) call *%eax
G(b_ret2_to)
G(b_int) int $0x30
G(b_after_int)
G(b_ud)	ud2
G(b_after_ud)
G(b_ljmp) ljmp $0x08, $b_t6
G(b_t6)
G(b_lcall) lcall $0x08, $b_farfn
G(b_after_lcall)
	mov $0, %ecx
G(b_rep) rep movsb			/* no record: not a branch */
	bts_off
	pop %ebx
	ret
G(b_fn)	ret
G(b_farfn)
G(b_lret) lret

/* void seq_c(uint32_t debugctl): six jumps to the next instruction */
	.globl seq_c
seq_c:
	mov 4(%esp), %eax
	bts_on
G(c_j1)	jmp c_j2
G(c_j2)	jmp c_j3
G(c_j3)	jmp c_j4
G(c_j4)	jmp c_j5
G(c_j5)	jmp c_j6
G(c_j6)	jmp c_end
G(c_end)
	bts_off
	ret

/*
 * void seq_d(uint32_t debugctl): kernel -> user (iret), user jmp, user
 * int $0x80 -> kernel, kernel jmp; then back to the caller.
 */
	.globl seq_d
seq_d:
	push %ebx
	push %esi
	push %edi
	push %ebp
	mov %esp, d_saved_esp
	mov %esp, tss+4
	mov 20(%esp), %eax
	bts_on
	pushl $0x23			/* user ss */
	pushl $user_stack_top
	pushfl
	pushl $0x1b			/* user cs */
	pushl $d_user
G(d_iret) iret
G(d_user)
G(d_uj)	jmp d_u1
G(d_u1)
G(d_int) int $0x80
	.globl isr80
isr80:
G(d_kj)	jmp d_k1
G(d_k1)
	bts_off
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov d_saved_esp, %esp
	pop %ebp
	pop %edi
	pop %esi
	pop %ebx
	ret

/* void seq_w(uint32_t debugctl): 40 two-byte jumps, each to the next */
	.globl seq_w
seq_w:
	mov 4(%esp), %eax
	bts_on
G(w_start)
	.rept 40
	jmp 1f
1:
	.endr
G(w_end)
	bts_off
	ret

/*
 * void seq_e(uint32_t debugctl): one jump, then TF set: the single-step
 * #DB (isr1 clears TF again) clears DEBUGCTL.LBR and is not recorded, so
 * the jump after it is not either.  e_debugctl: trace_msr (DEBUGCTL, or
 * Arch LBR's LBR_CTL, which the #DB clears LBREN of) after the #DB.
 */
	.globl seq_e
seq_e:
	mov 4(%esp), %eax
	bts_on
G(e_j)	jmp e_1
G(e_1)	pushfl
	orl $0x100, (%esp)
	popfl
	nop
	nop
G(e_j2)	jmp e_2
G(e_2)	mov trace_msr, %ecx		/* DEBUGCTL, or Arch LBR's LBR_CTL */
	rdmsr
	mov %eax, e_debugctl
	bts_off
	ret

/*
 * void cs_seq(uint32_t debugctl): call-stack mode's sequence: cs_seq calls
 * cs_f1, which calls cs_f2, which calls cs_f4 (which returns: its call
 * popped) and then cs_f3, which turns recording off (trace_msr = 0), so
 * three calls are open.  void cs_empty(uint32_t debugctl): recording on,
 * one RET with no call before it, off.
 */
	.globl cs_seq
cs_seq:
	mov 4(%esp), %eax
	bts_on
G(cs_c1) call cs_f1
	ret
G(cs_f1)
G(cs_c2) call cs_f2
	ret
G(cs_f2)
G(cs_c4) call cs_f4
G(cs_c3) call cs_f3
	ret
G(cs_f4)
G(cs_f4r) ret
G(cs_f3)
	bts_off
	ret

	.globl cs_empty
cs_empty:
	mov 4(%esp), %eax
	bts_on
	push $1f
	ret
1:	bts_off
	ret

/* void touch(uint32_t debugctl): BTS on, one jump, off (the fatal modes) */
	.globl touch
touch:
	mov 4(%esp), %eax
	bts_on
G(t_j)	jmp t_end
G(t_end)
	bts_off
	ret

/*
 * void pmu_seq(uint32_t global_ctrl_lo, uint32_t global_ctrl_hi): counting
 * on (pmu_ctrl_msr: IA32_PERF_GLOBAL_CTRL), a known sequence, counting off.  Counted by
 * the PMU model from the instruction after the first WRMSR to the second
 * WRMSR included: 13 instructions, 6 branch instructions (3 JNZ, JMP, CALL,
 * RET), 5 taken near branches (2 JNZ, JMP, CALL, RET).
 */
	.globl pmu_seq
pmu_seq:
	push %ebx
	mov pmu_ctrl_msr, %ecx
	mov 8(%esp), %eax
	mov 12(%esp), %edx
	wrmsr
	mov $3, %ebx
1:	dec %ebx
	jnz 1b
	jmp 2f
2:	call pmu_fn
	xor %eax, %eax
	xor %edx, %edx
	wrmsr
	pop %ebx
	ret
pmu_fn:
	ret

/* NMI (the PMU model's PMI through LVTPC): count it, keep its return EIP */
	.globl isr2
isr2:
	incl nmi_count
	push %eax
	mov 4(%esp), %eax
	mov %eax, nmi_eip
	pop %eax
G(isr2_iret) iret

/* #UD: count it, skip the 2-byte ud2 */
	.globl isr6
isr6:
	incl ud_count
	addl $2, (%esp)
G(isr6_iret) iret

/* #GP from wrmsr/rdmsr: count it, skip the 2-byte instruction */
	.globl isr13
isr13:
	add $4, %esp
	incl gp_count
	addl $2, (%esp)
	iret

/* #DB (single-step): count it, clear TF in the interrupted EFLAGS */
	.globl isr1
isr1:
	incl db_count
	andl $~0x100, 8(%esp)
	iret

/* int $0x30: returns at once */
	.globl isr30
isr30:
G(isr30_iret) iret

	.globl isr_unexpected
isr_unexpected:
	mov $0x3f8, %dx
	mov $'X', %al
	out %al, %dx
	mov $0xf4, %dx
	mov $0x13, %al
	out %al, %dx
1:	hlt
	jmp 1b

/*
 * uint32_t cx8_flags(uint32_t val, uint32_t equal): EFLAGS after a
 * CMPXCHG8B that succeeds (EQUAL 1) or fails (0), in code laid out as
 * Linux's SLUB fast path before its CMPXCHG16B: the translation block is
 * entered with the flags as a whole (POPF ends the block: CC_OP_EFLAGS),
 * an ADD leaves a value that is not a flags value (VAL, e.g. a slab
 * object's address) as its CC_SRC, an XOR with a memory operand (the load
 * stores CC_SRC to the CPU state) sets ZF and PF, then CMPXCHG8B.  Its
 * flags must be the XOR's with ZF set or cleared (test.c
 * test_cmpxchg_flags); the caller's EFLAGS are restored.
 */
	.globl cx8_flags
cx8_flags:
	push %ebx
	push %esi
	push %edi
	pushf
	mov 20(%esp), %esi
	mov 24(%esp), %edx
	xor $1, %edx
	mov %edx, %eax			/* EDX:EAX 0:0 (equal) or 1:1 */
	movl $0, cx8_mem
	movl $0, cx8_mem + 4
	xor %ebx, %ebx
	xor %ecx, %ecx
	pushl $2
	popf
	add %esi, %ecx
	xor cx8_zero, %ebx
	cmpxchg8b cx8_mem
	pushf
	pop %eax
	popf
	pop %edi
	pop %esi
	pop %ebx
	ret

	.data
	.globl ud_count, gp_count, db_count, e_debugctl, nmi_count, nmi_eip
nmi_count: .long 0
nmi_eip: .long 0
d_saved_esp: .long 0
db_count: .long 0
e_debugctl: .long 0
ud_count: .long 0
gp_count: .long 0
	.align 8
cx8_mem: .long 0, 0
cx8_zero: .long 0

	.bss
	.align 16
	.space 16384
	.globl stack_top
stack_top:
	.space 4096
user_stack_top:
