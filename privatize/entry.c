/* strand_entry.o: linked by mpicc into every program (never into libmpi).
 *
 * mpicc links a program as a shared object, so that it can be loaded once
 * per rank.  This object makes that shared object directly runnable too:
 *   - a .interp section: the linker then writes a PT_INTERP header naming
 *     the dynamic loader, and the kernel runs the file like a PIE;
 *   - _strand_start, the entry point (mpicc passes -e _strand_start).
 * The dynamic loader ignores both when the file is dlopen'ed.  It also
 * exports strand_program_main, a pointer to the program's main.
 *
 * At entry the loader has run the constructors of every library but not
 * those of the program (that is libc's _start's job, and this is not it).
 * The stack holds argc, then argv[], then envp[]; the loader's finalizer
 * (rtld_fini) is in %rdx on x86_64 and in x0 on aarch64. */

#ifndef STRAND_DYNAMIC_LOADER
#error "STRAND_DYNAMIC_LOADER must name the dynamic loader, e.g. /lib64/ld-linux-x86-64.so.2"
#endif

__attribute__((section(".interp"), used, aligned(1))) static const char
    strand_interp[] = STRAND_DYNAMIC_LOADER;

/* Each copy's main, found by the loader with dlsym: main itself may be
 * hidden (a program compiled with -fvisibility=hidden), this never is. */
int main(int argc, char **argv, char **envp);
__attribute__((visibility("default"), used)) int (*const strand_program_main)(int, char **,
                                                                              char **) = main;

/* _Noreturn void strand_program_start(int argc, char **argv, void (*rtld_fini)(void)); */

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl _strand_start\n"
        ".hidden _strand_start\n"
        ".type _strand_start, @function\n"
        "_strand_start:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined rip\n"  /* outermost frame, for debuggers and unwinders */
        "    xorl %ebp, %ebp\n"
        "    movq (%rsp), %rdi\n"   /* argc */
        "    leaq 8(%rsp), %rsi\n"  /* argv */
        /* %rdx: rtld_fini, passed on as the third argument */
        "    andq $-16, %rsp\n"     /* the ABI's alignment at a call */
        "    call *strand_program_start@GOTPCREL(%rip)\n"
        "    hlt\n"
        "    .cfi_endproc\n"
        ".size _strand_start, . - _strand_start\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl _strand_start\n"
        ".hidden _strand_start\n"
        ".type _strand_start, %function\n"
        "_strand_start:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined x30\n"
        "    mov x29, #0\n"
        "    mov x30, #0\n"
        "    mov x2, x0\n"          /* rtld_fini */
        "    ldr x0, [sp]\n"        /* argc (the kernel keeps sp 16-byte aligned) */
        "    add x1, sp, #8\n"      /* argv */
        "    bl strand_program_start\n"
        "    brk #0\n"
        "    .cfi_endproc\n"
        ".size _strand_start, . - _strand_start\n");
#else
#error "privatize/entry.c: no entry point for this architecture"
#endif
