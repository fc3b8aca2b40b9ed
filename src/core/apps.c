/* The application contexts of a launched job: see apps.h. */
#include "apps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int count;
    struct app *apps;
} table;

static bool plain_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("/._,+=:@-", c) != NULL;
}

int apps_encode(const char *word, char *out, size_t len, size_t *used)
{
    size_t at = *used;
    const char *empty = "%%";
    if (*word == '\0')
        word = NULL;
    for (const unsigned char *p = (const unsigned char *)(word != NULL ? word : empty); *p != '\0'; p++) {
        int n = word == NULL || plain_byte(*p) ? 1 : 3;
        if (at + n >= len) {
            out[*used] = '\0';     /* what was there before the word */
            return -1;
        }
        if (n == 1)
            out[at++] = (char)*p;
        else
            at += (size_t)snprintf(out + at, len - at, "%%%02X", *p);
    }
    out[at] = '\0';
    *used = at;
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decodes the word at text[0..n) into a new string; NULL when malformed. */
static char *decode_word(const char *text, size_t n)
{
    if (n == 2 && text[0] == '%' && text[1] == '%')
        return strdup("");
    char *word = malloc(n + 1), *out = word;
    for (size_t i = 0; word != NULL && i < n; i++) {
        if (text[i] != '%') {
            *out++ = text[i];
            continue;
        }
        int hi = i + 2 < n ? hex_digit(text[i + 1]) : -1;
        int lo = hi >= 0 ? hex_digit(text[i + 2]) : -1;
        if (lo < 0 || (hi == 0 && lo == 0)) {
            free(word);
            return NULL;
        }
        *out++ = (char)(hi << 4 | lo);
        i += 2;
    }
    if (word != NULL)
        *out = '\0';
    return word;
}

void apps_free_one(struct app *app)
{
    free(app->path);
    for (int i = 0; app->argv != NULL && i < app->argc; i++)
        free(app->argv[i]);
    free(app->argv);
    memset(app, 0, sizeof *app);
}

/* The numbers in front: FIRST NRANKS APPNUM. Returns where the words
 * start, or NULL. */
static const char *parse_numbers(const char *value, struct app *app)
{
    long numbers[3];
    const char *p = value;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        numbers[i] = strtol(p, &end, 10);
        if (errno != 0 || end == p || *end != ' ' || numbers[i] < 0 || numbers[i] > 1 << 30)
            return NULL;
        p = end + 1;
    }
    app->first_rank = (int)numbers[0];
    app->nranks = (int)numbers[1];
    app->appnum = (int)numbers[2];
    return app->nranks > 0 ? p : NULL;
}

int apps_parse(const char *value, struct app *app, char *why, size_t why_len)
{
    memset(app, 0, sizeof *app);
    const char *p = parse_numbers(value, app);
    if (p == NULL) {
        snprintf(why, why_len, "expected FIRST NRANKS APPNUM PATH ARGV0 ..., got '%.80s'", value);
        return -1;
    }
    size_t words = 1;
    for (const char *s = p; *s != '\0'; s++)
        words += *s == ' ';
    app->argv = calloc(words + 1, sizeof *app->argv);
    bool ok = app->argv != NULL && words >= 2;
    for (size_t w = 0; ok && w < words; w++) {
        size_t n = strcspn(p, " ");
        char *word = n > 0 ? decode_word(p, n) : NULL;
        ok = word != NULL;
        if (ok && w == 0)
            app->path = word;
        else if (ok)
            app->argv[app->argc++] = word;
        p += n + (p[n] == ' ');
    }
    if (!ok || strchr(app->path, '/') == NULL) {
        snprintf(why, why_len, "malformed program or arguments in '%.80s'", value);
        apps_free_one(app);
        return -1;
    }
    return 0;
}

static int overlapping(const struct app *a, const struct app *b)
{
    return a->first_rank < b->first_rank + b->nranks && b->first_rank < a->first_rank + a->nranks;
}

int apps_read(int nranks, char *why, size_t why_len)
{
    for (int k = 0; k < table.count; k++)   /* a second initial world (unit tests) */
        apps_free_one(&table.apps[k]);
    free(table.apps);
    table.apps = NULL;
    table.count = 0;
    const char *count_text = getenv("STRAND_APPS");
    if (count_text == NULL || *count_text == '\0')
        return 0;
    char *end;
    long count = strtol(count_text, &end, 10);
    if (*end != '\0' || count < 1 || count > nranks) {
        snprintf(why, why_len, "STRAND_APPS=%s: expected 1 to %d apps", count_text, nranks);
        return -1;
    }
    table.apps = calloc((size_t)count, sizeof *table.apps);
    if (table.apps == NULL) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    for (table.count = 0; table.count < count; table.count++) {
        char name[32], reason[160];
        snprintf(name, sizeof name, "STRAND_APP_%d", table.count);
        const char *value = getenv(name);
        struct app *a = &table.apps[table.count];
        if (value == NULL) {
            snprintf(why, why_len, "STRAND_APPS=%ld but %s is not set", count, name);
            return -1;
        }
        if (apps_parse(value, a, reason, sizeof reason) != 0) {
            snprintf(why, why_len, "%s: %s", name, reason);
            return -1;
        }
        bool clash = a->first_rank + a->nranks > nranks;
        for (int k = 0; k < table.count && !clash; k++)
            clash = overlapping(a, &table.apps[k]);
        if (clash) {
            snprintf(why, why_len, "%s: ranks %d-%d overlap another app or lie outside the job of %d", name,
                     a->first_rank, a->first_rank + a->nranks - 1, nranks);
            return -1;
        }
    }
    return table.count;
}

const struct app *apps_of_rank(int world_rank)
{
    for (int k = 0; k < table.count; k++)
        if (world_rank >= table.apps[k].first_rank &&
            world_rank < table.apps[k].first_rank + table.apps[k].nranks)
            return &table.apps[k];
    return NULL;
}

int apps_index(const struct app *app)
{
    return (int)(app - table.apps);
}
