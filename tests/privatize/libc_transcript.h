/* A transcript of libc calls whose state is process-wide in libc (getopt,
 * rand/random, the drand48 family, strtok), shared by libc_state.c (an MPI
 * program: each rank writes its transcript) and libc_reference.c (a plain
 * process under glibc: the transcripts ranks must match).
 *
 * libc_transcript(out, who, diagnostics, step) writes what the calls return
 * for participant `who` (its arguments and seeds depend on who).  step() is
 * called at the same 10 points for every who, so ranks can run the calls in
 * lockstep: with libc state shared between ranks, each rank's second call
 * would then see the others' first. */
#ifndef LIBC_TRANSCRIPT_H
#define LIBC_TRANSCRIPT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <search.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


struct getopt_case {
    const char *optstring;
    int kind; /* 0 getopt, 1 getopt_long, 2 getopt_long_only */
    const char *args[16];
};

static int transcript_flag;
static const struct option transcript_longopts[] = {
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"size", required_argument, NULL, 's'},
    {"level", optional_argument, NULL, 'l'},
    {"flag", no_argument, &transcript_flag, 42},
    {"count", required_argument, NULL, 'n'},
    {NULL, 0, NULL, 0},
};

/* "%W" in an argument becomes who's number, so every rank parses other values. */
static const struct getopt_case transcript_cases[] = {
    {"ab:c::", 0, {"prog", "x", "-a", "-b", "%W", "y", "-cq%W", "-c", "--", "-a", NULL}},
    {"+ab:", 0, {"prog", "-ab%W", "stop", "-a", NULL}},
    {"-ab:", 0, {"prog", "in%W", "-a", "out", "-b", "%W", NULL}},
    {":ab:x", 0, {"prog", "-z", "-a", "-b", NULL}},
    {"ab:", 0, {"prog", "-b", "-q", "-a%W", NULL}},
    {"vs:l::n:", 1,
     {"prog", "--verb", "--size=%W", "--size", "9", "--lev", "--level=%W", "--flag", "f%W", "--ver",
      "--verbose=x", "--count", "--bogus", "-s%W", NULL}},
    {"vs:n:", 2, {"prog", "-verbose", "-si", "%W", "-v", "-fl", "-ve", "-co=%W", "-x", NULL}},
    {"W;vs:", 1, {"prog", "-W", "size=%W", "-Wverbose", "-v", "--", "-s", NULL}},
};
#define TRANSCRIPT_CASES (int)(sizeof transcript_cases / sizeof transcript_cases[0])

static void transcript_getopt(FILE *out, int who, const struct getopt_case *c, int rescan,
                              void (*step)(void))
{
    char storage[16][32];
    char *argv[17];
    int argc = 0;
    for (; c->args[argc] != NULL; argc++) {
        const char *w = strstr(c->args[argc], "%W");
        if (w != NULL)
            snprintf(storage[argc], sizeof storage[argc], "%.*s%d%s", (int)(w - c->args[argc]),
                     c->args[argc], who, w + 2);
        else
            snprintf(storage[argc], sizeof storage[argc], "%s", c->args[argc]);
        argv[argc] = storage[argc];
    }
    argv[argc] = NULL;
    optind = rescan;
    transcript_flag = 0;
    for (int calls = 0;; calls++) {
        int longindex = -1, r;
        optarg = NULL;
        optopt = 0;
        if (c->kind == 0)
            r = getopt(argc, argv, c->optstring);
        else if (c->kind == 1)
            r = getopt_long(argc, argv, c->optstring, transcript_longopts, &longindex);
        else
            r = getopt_long_only(argc, argv, c->optstring, transcript_longopts, &longindex);
        if (calls == 0 && step != NULL)
            step();
        fprintf(out, " %d/%s/%d/%d/%d/%d", r, optarg != NULL ? optarg : "-", optind, optopt,
                longindex, transcript_flag);
        if (r == -1)
            break;
    }
    fprintf(out, "\n  argv:");
    for (int i = 0; i < argc; i++)
        fprintf(out, " %s", argv[i]);
    fprintf(out, "\n");
}

static void transcript_random(FILE *out, int who, void (*step)(void))
{
    srand((unsigned)who + 1);
    fprintf(out, "rand %d", rand());
    step();
    for (int i = 0; i < 10; i++)
        fprintf(out, " %d", rand());
    srandom((unsigned)who * 7 + 3);
    fprintf(out, "\nrandom %ld", random());
    step();
    for (int i = 0; i < 10; i++)
        fprintf(out, " %ld", random());
    static char state[64];
    char *previous = initstate((unsigned)who, state, sizeof state);
    for (int i = 0; i < 5; i++)
        fprintf(out, " %ld", random());
    setstate(previous);
    for (int i = 0; i < 5; i++)
        fprintf(out, " %ld", random());
    fprintf(out, "\n");
}

static void transcript_drand48(FILE *out, int who, void (*step)(void))
{
    srand48(who);
    fprintf(out, "drand48 %.17g", drand48());
    step();
    for (int i = 0; i < 4; i++)
        fprintf(out, " %.17g %ld %ld", drand48(), lrand48(), mrand48());
    unsigned short xsubi[3] = {(unsigned short)who, 2, 3};
    fprintf(out, " | %.17g %ld %ld", erand48(xsubi), nrand48(xsubi), jrand48(xsubi));
    unsigned short seed[3] = {1, (unsigned short)who, 5};
    unsigned short *old = seed48(seed);
    fprintf(out, " | %u %u %u", old[0], old[1], old[2]);
    fprintf(out, " %ld", lrand48());
    unsigned short param[7] = {(unsigned short)who, 6, 7, 0xe66d, 0xdeec, 0x5, 0xb};
    lcong48(param);
    for (int i = 0; i < 3; i++)
        fprintf(out, " %ld", lrand48());
    fprintf(out, "\n");
}

static void transcript_strtok(FILE *out, int who, void (*step)(void))
{
    char text[128];
    snprintf(text, sizeof text, ",,rank %d;;has, some %d tokens;", who, who * 3);
    fprintf(out, "strtok");
    for (char *t = strtok(text, " ,;"); t != NULL; t = strtok(NULL, " ,;")) {
        fprintf(out, " [%s]", t);
        if (step != NULL) {
            step();
            step = NULL;
        }
    }
    fprintf(out, "\n");
}

static void print_tm(FILE *out, const struct tm *tm)
{
    fprintf(out, " %d-%d-%d %d:%d:%d wday %d yday %d dst %d", tm->tm_year, tm->tm_mon, tm->tm_mday,
            tm->tm_hour, tm->tm_min, tm->tm_sec, tm->tm_wday, tm->tm_yday, tm->tm_isdst);
}

/* localtime's and gmtime's result is one static struct tm. */
static void transcript_time(FILE *out, int who, void (*step)(void))
{
    time_t t = 1000000000 + (time_t)who * 86400 * 37 + who * 3607;
    struct tm *utc = gmtime(&t);
    step();
    fprintf(out, "gmtime");
    print_tm(out, utc);
    struct tm *local = localtime(&t);
    fprintf(out, "\nlocaltime");
    print_tm(out, local);
    fprintf(out, " same buffer %d\n", local == utc);
    /* asctime's and ctime's result is one static buffer too */
    struct tm odd = *utc;
    char *text = asctime(utc);
    fprintf(out, "asctime %s", text);
    odd.tm_wday = 9;
    odd.tm_mon = -1;
    odd.tm_year = 20000 + who;
    odd.tm_mday = 123;
    fprintf(out, "asctime odd %s", asctime(&odd));
    fprintf(out, "ctime %s", ctime(&t));
}

/* hsearch's table is one per process in libc. */
static void transcript_hsearch(FILE *out, int who, void (*step)(void))
{
    static char keys[8][24];
    hcreate(16);
    for (int i = 0; i < 8; i++) {
        snprintf(keys[i], sizeof keys[i], "key-%d-%d", who, i);
        ENTRY e = {keys[i], (void *)(long)(who * 100 + i)};
        hsearch(e, ENTER);
    }
    step();
    fprintf(out, "hsearch");
    for (int i = 0; i < 8; i++) {
        ENTRY e = {keys[i], NULL}, *found = hsearch(e, FIND);
        fprintf(out, " %ld", found != NULL ? (long)found->data : -1L);
    }
    hdestroy();
    fprintf(out, "\n");
}

static void transcript_no_step(void)
{
}

static void libc_transcript(FILE *out, int who, int diagnostics, void (*step)(void))
{
    FILE *saved_stderr = stderr;
    if (step == NULL)
        step = transcript_no_step;
    opterr = diagnostics;
    if (diagnostics)
        stderr = out; /* getopt's messages go to stderr */
    for (int c = 0; c < TRANSCRIPT_CASES; c++) {
        fprintf(out, "getopt case %d:", c);
        /* the first case counts towards the lockstep points, the others not */
        transcript_getopt(out, who, &transcript_cases[c], 0, c < 2 ? step : NULL);
        fprintf(out, " rescan with optind = 1:");
        transcript_getopt(out, who, &transcript_cases[c], 1, c < 2 ? step : NULL);
    }
    if (diagnostics)
        stderr = saved_stderr;
    transcript_random(out, who, step);
    transcript_drand48(out, who, step);
    transcript_strtok(out, who, step);
    transcript_time(out, who, step);
    transcript_hsearch(out, who, step);
}

#endif
