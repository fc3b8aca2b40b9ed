/* Small program for tests/unit/test_loader: built as a shared object in
 * several variants (see privatize/Makefile.inc).  The loader_test_* hooks
 * are defined by the test program, which exports them (-rdynamic). */
#include <stdlib.h>

extern int loader_test_constructor_calls;
void loader_test_atexit_ran(int tag);
void loader_test_destructor_ran(void);

#ifdef FIXTURE_STANDALONE /* the PIE variant is an executable: no test program around it */
int loader_test_constructor_calls;
void loader_test_atexit_ran(int tag) { (void)tag; }
void loader_test_destructor_ran(void) {}
#endif

int fixture_global;                 /* exported: -Bsymbolic keeps it per copy */
static int fixture_file_static;
static int constructed;
static int atexit_tag = -1;

/* something sizeable in .rodata and .data, like a real program */
const char fixture_table[3 * 4096] = "read-only table";
char fixture_buffer[2 * 4096] = "writable data";

#ifdef FIXTURE_IE_TLS
__thread int fixture_tls __attribute__((tls_model("initial-exec")));
int fixture_tls_bump(void) { return ++fixture_tls; }
#endif

#ifdef FIXTURE_GNU_UNIQUE
/* what g++ emits for an inline or template static */
__asm__(".section .bss\n"
        ".globl fixture_unique\n"
        ".type fixture_unique, @gnu_unique_object\n"
        ".size fixture_unique, 4\n"
        ".balign 4\n"
        "fixture_unique:\n"
        ".zero 4\n"
        ".previous\n");
#endif

__attribute__((constructor)) static void construct(void)
{
    constructed++;
    loader_test_constructor_calls++;
}

__attribute__((destructor)) static void destruct(void) { loader_test_destructor_ran(); }

int fixture_constructed(void) { return constructed; }

int fixture_bump(void)
{
    static int function_static;
    fixture_file_static++;
    function_static++;
    fixture_global++;
    return fixture_global * 100 + fixture_file_static * 10 + function_static;
}

int *fixture_global_address(void) { return &fixture_global; }

static void at_exit_handler(void) { loader_test_atexit_ran(atexit_tag); }

void fixture_register_atexit(int tag)
{
    atexit_tag = tag;
    atexit(at_exit_handler);
}

#ifndef FIXTURE_NO_MAIN
int main(int argc, char **argv, char **envp)
{
    (void)argv;
    (void)envp;
    return 40 + argc + fixture_buffer[0] - 'w' + fixture_table[0] - 'r';
}
#endif
