/* CUnit tests of privatize/image.c: private copies of a program.
 * Fixtures are variants of tests/privatize/loader_fixture.c, built into
 * LOADER_FIXTURE_DIR by privatize/Makefile.inc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "image.h"

#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LOADER_FIXTURE_DIR
#error "LOADER_FIXTURE_DIR must name the directory of the loader fixtures"
#endif

#define FIXTURE(name) LOADER_FIXTURE_DIR "/" name
#define NCOPIES 4

/* ---- hooks the fixture calls (exported by linking with -rdynamic) ---- */

#define HOOK __attribute__((visibility("default"))) /* despite -fvisibility=hidden */

HOOK int loader_test_constructor_calls;
static int atexit_runs[NCOPIES + 1];
static int destructor_runs;

HOOK void loader_test_atexit_ran(int tag);
HOOK void loader_test_destructor_ran(void);

void loader_test_atexit_ran(int tag)
{
    if (tag >= 0 && tag <= NCOPIES)
        atexit_runs[tag]++;
}

void loader_test_destructor_ran(void) { destructor_runs++; }

/* ---- helpers ---- */

static char err[1024];

static void *symbol(struct program_copy *c, const char *name)
{
    void *p = dlsym(c->handle, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

static int call_int(struct program_copy *c, const char *name)
{
    int (*f)(void);
    *(void **)&f = symbol(c, name);
    return f();
}

static struct program_image *open_fixture(const char *path)
{
    struct program_image *img = NULL;
    int rc = program_image_open(path, &img, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return img;
}

static void load(struct program_image *img, struct program_copy *c)
{
    int rc = program_image_load_copy(img, c, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

/* Finds the /proc/self/maps line of the mapping holding addr. */
static int mapping_of(const void *addr, unsigned long *inode, char *perms)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        uintptr_t from, to;
        unsigned long ino;
        char p[8];
        if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &from, &to, p, &ino) == 4 &&
            (uintptr_t)addr >= from && (uintptr_t)addr < to) {
            *inode = ino;
            strcpy(perms, p);
            found = 1;
        }
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* Sums "Rss" and "Anonymous" over the smaps entries backed by inode. */
static void resident_of_file(unsigned long inode, long *rss_kb, long *anon_kb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in_file = 0;
    *rss_kb = *anon_kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long from, to, offset, ino;
        char perms[8];
        long kb;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %lu", &from, &to, perms, &offset, &ino) == 5)
            in_file = ino == inode;
        else if (in_file && sscanf(line, "Rss: %ld kB", &kb) == 1)
            *rss_kb += kb;
        else if (in_file && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
            *anon_kb += kb;
    }
    if (f != NULL)
        fclose(f);
}

/* ---- tests ---- */

static void test_copies_have_private_globals(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    struct program_copy c[NCOPIES];
    int constructor_calls_before = loader_test_constructor_calls;

    for (int i = 0; i < NCOPIES; i++)
        load(img, &c[i]);
    CU_ASSERT_EQUAL(loader_test_constructor_calls, constructor_calls_before + NCOPIES);
    for (int i = 0; i < NCOPIES; i++) {
        CU_ASSERT_EQUAL(call_int(&c[i], "fixture_constructed"), 1);
        /* global, file static and function static each went from 0 to 1 */
        CU_ASSERT_EQUAL(call_int(&c[i], "fixture_bump"), 111);
        CU_ASSERT_PTR_NOT_NULL(c[i].main);
        CU_ASSERT_EQUAL(c[i].main(2, NULL, NULL), 42);
        for (int j = 0; j < i; j++) {
            CU_ASSERT_PTR_NOT_EQUAL(c[i].handle, c[j].handle);
            CU_ASSERT_PTR_NOT_EQUAL(symbol(&c[i], "fixture_global"),
                                    symbol(&c[j], "fixture_global"));
            CU_ASSERT_NOT_EQUAL(c[i].base, c[j].base);
        }
    }
    /* -Bsymbolic: the copy's own code uses its own global */
    int *(*address)(void);
    *(void **)&address = symbol(&c[1], "fixture_global_address");
    CU_ASSERT_PTR_EQUAL(address(), symbol(&c[1], "fixture_global"));
    CU_ASSERT_EQUAL(call_int(&c[1], "fixture_bump"), 222);
    CU_ASSERT_EQUAL(call_int(&c[2], "fixture_bump"), 222);
    CU_ASSERT_EQUAL(call_int(&c[0], "fixture_bump"), 222);
    for (int i = 0; i < NCOPIES; i++)
        program_image_unload_copy(&c[i]);
    program_image_close(img);
}

/* Trap 1: each copy comes from its own memfd; the fd number is reused after
 * each load, and still every dlopen yields a new object. */
static void test_each_copy_has_its_own_file(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    struct program_copy c[NCOPIES];
    for (int i = 0; i < NCOPIES; i++) {
        load(img, &c[i]);
        CU_ASSERT_NOT_EQUAL(c[i].file_id, 0);
        for (int j = 0; j < i; j++)
            CU_ASSERT_NOT_EQUAL(c[i].file_id, c[j].file_id);
    }
    /* dladdr and backtraces name the program, not the copy's closed fd */
    Dl_info info;
    CU_ASSERT(dladdr(symbol(&c[NCOPIES - 1], "fixture_bump"), &info) != 0);
    CU_ASSERT_STRING_EQUAL(info.dli_fname, FIXTURE("loader_fixture.so"));
    /* unload one and load again: still distinct from the survivors */
    program_image_unload_copy(&c[1]);
    load(img, &c[1]);
    for (int j = 0; j < NCOPIES; j++)
        if (j != 1)
            CU_ASSERT_PTR_NOT_EQUAL(symbol(&c[1], "fixture_global"),
                                    symbol(&c[j], "fixture_global"));
    for (int i = 0; i < NCOPIES; i++)
        program_image_unload_copy(&c[i]);
    program_image_close(img);
}

/* Read-only segments come from the master file; writable pages are the
 * copy's own, so nothing of the copy's memfd stays resident. */
static void test_code_is_shared_and_copy_files_are_empty(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    struct program_copy c[2];
    unsigned long code_inode[2], table_inode[2], data_inode;
    char perms[8];
    for (int i = 0; i < 2; i++) {
        load(img, &c[i]);
        CU_ASSERT_FATAL(mapping_of(symbol(&c[i], "fixture_bump"), &code_inode[i], perms));
        CU_ASSERT_EQUAL(perms[2], 'x');
        CU_ASSERT_NOT_EQUAL(code_inode[i], c[i].file_id);
        CU_ASSERT_FATAL(mapping_of(symbol(&c[i], "fixture_table"), &table_inode[i], perms));
        CU_ASSERT_EQUAL(table_inode[i], code_inode[i]);
        CU_ASSERT_FATAL(mapping_of(symbol(&c[i], "fixture_buffer"), &data_inode, perms));
        CU_ASSERT_EQUAL(data_inode, c[i].file_id);
        CU_ASSERT_EQUAL(perms[1], 'w');
        long rss, anon;
        resident_of_file(c[i].file_id, &rss, &anon);
        CU_ASSERT(rss > 0);
        CU_ASSERT_EQUAL(rss, anon);
    }
    CU_ASSERT_EQUAL(code_inode[0], code_inode[1]);
    /* the copy still reads its data correctly after all the re-mapping */
    CU_ASSERT_STRING_EQUAL((char *)symbol(&c[1], "fixture_buffer"), "writable data");
    CU_ASSERT_STRING_EQUAL((char *)symbol(&c[1], "fixture_table"), "read-only table");
    for (int i = 0; i < 2; i++)
        program_image_unload_copy(&c[i]);
    program_image_close(img);
}

static void test_unload_runs_atexit_handlers_of_that_copy(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    struct program_copy c[NCOPIES];
    void (*register_atexit)(int);
    memset(atexit_runs, 0, sizeof atexit_runs);
    for (int i = 0; i < NCOPIES; i++) {
        load(img, &c[i]);
        *(void **)&register_atexit = symbol(&c[i], "fixture_register_atexit");
        register_atexit(i);
    }
    int destructors_before = destructor_runs;
    program_image_unload_copy(&c[2]);
    CU_ASSERT_EQUAL(atexit_runs[2], 1);
    CU_ASSERT_EQUAL(atexit_runs[0] + atexit_runs[1] + atexit_runs[3], 0);
    CU_ASSERT_EQUAL(destructor_runs, destructors_before + 1);
    for (int i = 0; i < NCOPIES; i++)
        if (i != 2)
            program_image_unload_copy(&c[i]);
    for (int i = 0; i < NCOPIES; i++)
        CU_ASSERT_EQUAL(atexit_runs[i], 1);
    CU_ASSERT_EQUAL(destructor_runs, destructors_before + NCOPIES);
    program_image_close(img);
}

/* For ranks whose threads still run: handlers and destructors now, once,
 * and the copy stays usable. */
static void test_finish_runs_handlers_once_and_keeps_copy(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    struct program_copy c;
    void (*register_atexit)(int);
    memset(atexit_runs, 0, sizeof atexit_runs);
    load(img, &c);
    *(void **)&register_atexit = symbol(&c, "fixture_register_atexit");
    register_atexit(1);
    int destructors_before = destructor_runs;
    program_image_finish_copy(&c);
    CU_ASSERT_EQUAL(atexit_runs[1], 1);
    CU_ASSERT_EQUAL(destructor_runs, destructors_before + 1);
    CU_ASSERT_EQUAL(call_int(&c, "fixture_bump"), 111); /* still mapped and working */
    program_image_unload_copy(&c);
    CU_ASSERT_EQUAL(atexit_runs[1], 1);
    CU_ASSERT_EQUAL(destructor_runs, destructors_before + 1);
    program_image_close(img);
}

static void test_disarmed_destructors_do_not_run(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    struct program_copy c;
    load(img, &c);
    CU_ASSERT_EQUAL(program_image_disarm_destructors(img, c.base, err, sizeof err), 0);
    int destructors_before = destructor_runs;
    program_image_unload_copy(&c);
    CU_ASSERT_EQUAL(destructor_runs, destructors_before);
    program_image_close(img);
}

/* Trap 6: initial-exec TLS allows one copy, and says why not more. */
static void test_initial_exec_tls_refused_for_second_copy(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture_ietls.so"));
    struct program_copy c1, c2;
    load(img, &c1);
    CU_ASSERT_EQUAL(call_int(&c1, "fixture_tls_bump"), 1);
    CU_ASSERT_EQUAL(program_image_load_copy(img, &c2, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "initial-exec TLS"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "mpicc"));
    program_image_unload_copy(&c1);
    program_image_close(img);
}

static void test_gnu_unique_refused_for_second_copy(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture_unique.so"));
    struct program_copy c1, c2;
    load(img, &c1);
    CU_ASSERT_EQUAL(program_image_load_copy(img, &c2, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "STB_GNU_UNIQUE"));
    program_image_unload_copy(&c1);
    program_image_close(img);
}

/* Trap 6: a PIE is refused at open, with a pointer to mpicc. */
static void test_pie_refused(void)
{
    struct program_image *img = NULL;
    CU_ASSERT_EQUAL(program_image_open(FIXTURE("loader_fixture_pie"), &img, err, sizeof err), -1);
    CU_ASSERT_PTR_NULL(img);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "PIE"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "mpicc"));
}

static void test_bad_files_refused(void)
{
    struct program_image *img = NULL;
    char text[] = "/tmp/test_loader_XXXXXX";
    int fd = mkstemp(text);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(write(fd, "#!/bin/sh\necho this is not ELF at all, but long enough\n", 55) == 55);
    close(fd);
    CU_ASSERT_EQUAL(program_image_open(text, &img, err, sizeof err), -1);
    unlink(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an ELF file"));
    CU_ASSERT_EQUAL(program_image_open(FIXTURE("no-such-file"), &img, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
    CU_ASSERT_PTR_NULL(img);
}

static void test_program_without_main_refused(void)
{
    struct program_image *img = open_fixture(FIXTURE("loader_fixture_nomain.so"));
    struct program_copy c;
    CU_ASSERT_EQUAL(program_image_load_copy(img, &c, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "does not export main"));
    program_image_close(img);
}

/* Trap 7: when the process runs out of memory mappings, the error names
 * vm.max_map_count.  Uses up the mappings with one-page PROT_NONE/PROT_READ
 * alternations in one reservation (they cannot merge), loads, gives back. */
static void test_map_count_limit_is_named(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long limit = 0;
    if (f == NULL || fscanf(f, "%ld", &limit) != 1 || limit > 300000) {
        if (f != NULL)
            fclose(f);
        return; /* too large to exhaust quickly: nothing to check here */
    }
    fclose(f);
    struct program_image *img = open_fixture(FIXTURE("loader_fixture.so"));
    size_t pages = (size_t)limit;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *area = mmap(NULL, pages * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    CU_ASSERT_FATAL(area != MAP_FAILED);
    for (size_t i = 1; i < pages; i += 2)
        if (mprotect(area + i * page, page, PROT_READ) != 0)
            break; /* ENOMEM: the limit is reached */
    /* leave room for nothing: give back two mappings, fewer than a copy needs */
    munmap(area + (pages - 1) * page, page);
    struct program_copy c;
    int rc = program_image_load_copy(img, &c, err, sizeof err);
    munmap(area, pages * page);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "vm.max_map_count"));
    if (rc == 0)
        program_image_unload_copy(&c);
    program_image_close(img);
}

int main(void)
{
    struct {
        const char *name;
        CU_TestFunc run;
    } tests[] = {
        {"copies have private globals, statics, constructors", test_copies_have_private_globals},
        {"each copy has its own memfd (trap 1)", test_each_copy_has_its_own_file},
        {"code shared from master, copy files empty",
         test_code_is_shared_and_copy_files_are_empty},
        {"unload runs that copy's atexit handlers", test_unload_runs_atexit_handlers_of_that_copy},
        {"finish runs handlers once, copy stays", test_finish_runs_handlers_once_and_keeps_copy},
        {"disarmed destructors do not run", test_disarmed_destructors_do_not_run},
        {"initial-exec TLS: one copy only (trap 6)", test_initial_exec_tls_refused_for_second_copy},
        {"STB_GNU_UNIQUE: one copy only", test_gnu_unique_refused_for_second_copy},
        {"PIE refused (trap 6)", test_pie_refused},
        {"missing or non-ELF file refused", test_bad_files_refused},
        {"program without main refused", test_program_without_main_refused},
        {"vm.max_map_count named (trap 7)", test_map_count_limit_is_named},
    };
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite suite = CU_add_suite("privatize loader", NULL, NULL);
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        CU_add_test(suite, tests[i].name, tests[i].run);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed == 0 ? 0 : 1;
}
