/* args.c - parsing, help and typo suggestions for the gpath subcommands, all derived from
 * their declarative option tables (contract in args.h). */
#include "cli/args.h"

#include "server/api/suggest.h"

#include "cli/progress.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct given {
    const gp_cli_opt *opt;
    const char *value; /* NULL for flags */
} given;

struct gp_cli_args {
    const gp_cli_cmd *cmd;
    given *v;
    size_t n;
};

int gp_cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gp_cli_progress_clear();
    fputs("gpath: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return GP_CLI_EXIT_USAGE;
}

/* ---- suggestions ---- */

int gp_cli_unknown_option(const gp_cli_cmd *c, const char *word) {
    const char *names[128];
    size_t n = 0;
    for (size_t i = 0; i < c->nopts && n < 127; i++) names[n++] = c->opts[i].name;
    names[n++] = "help";
    const char *s = gp_suggest(word, names, n);
    if (s)
        return gp_cli_usage_error("unknown option --%s; did you mean --%s? (see gpath %s --help)",
                                  word, s, c->name);
    return gp_cli_usage_error("unknown option --%s (see gpath %s --help)", word, c->name);
}

/* ---- help ---- */

#define HELP_WIDTH 69 /* description columns: 31 + 69 = 100 */

void gp_cli_help_row(FILE *f, const gp_cli_opt *o) {
    char left[64];
    if (o->short_name)
        snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
    else
        snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
    const char *tags =
        (o->flags & GP_OPT_REQUIRED)
            ? ((o->flags & GP_OPT_REPEAT) ? " (required, repeatable)" : " (required)")
            : ((o->flags & GP_OPT_REPEAT) ? " (repeatable)" : "");
    /* the description wrapped at 100 columns, under its own column */
    char text[1200];
    snprintf(text, sizeof text, "%s%s", o->help, tags);
    const char *p = text;
    int first = 1;
    while (*p) {
        size_t len = strlen(p), cut = len;
        if (len > HELP_WIDTH) {
            cut = HELP_WIDTH;
            while (cut > 0 && p[cut] != ' ') cut--;
            if (cut == 0) cut = HELP_WIDTH;
        }
        fprintf(f, "  %-28s %.*s\n", first ? left : "", (int)cut, p);
        first = 0;
        p += cut;
        while (*p == ' ') p++;
    }
    if (o->arg && o->example) fprintf(f, "  %-28s   e.g. --%s %s\n", "", o->name, o->example);
    else if (!o->arg && strcmp(o->name, "help") != 0)
        fprintf(f, "  %-28s   e.g. --%s\n", "", o->name);
}

void gp_cli_help(const gp_cli_cmd *c, FILE *f) {
    fprintf(f, "usage: gpath %s [OPTIONS]\n%s\n\noptions:\n", c->name, c->summary);
    for (size_t i = 0; i < c->nopts; i++) gp_cli_help_row(f, &c->opts[i]);
    static const gp_cli_opt help = {"help", 'h', NULL, "this help", NULL, 0};
    gp_cli_help_row(f, &help);
    if (c->examples && c->examples[0]) {
        fprintf(f, "\nexamples:\n");
        for (const char *const *e = c->examples; *e; e++) fprintf(f, "  %s\n", *e);
    }
}

/* ---- parsing ---- */

static const gp_cli_opt *find_long(const gp_cli_cmd *c, const char *name, size_t len) {
    for (size_t i = 0; i < c->nopts; i++)
        if (strlen(c->opts[i].name) == len && strncmp(c->opts[i].name, name, len) == 0)
            return &c->opts[i];
    return NULL;
}

static const gp_cli_opt *find_short(const gp_cli_cmd *c, char s) {
    for (size_t i = 0; i < c->nopts; i++)
        if (c->opts[i].short_name == s) return &c->opts[i];
    return NULL;
}

static int need_value(const gp_cli_cmd *c, const gp_cli_opt *o) {
    if (o->example)
        return gp_cli_usage_error("%s: option --%s needs a value (e.g. --%s %s)", c->name, o->name,
                                  o->name, o->example);
    return gp_cli_usage_error("%s: option --%s needs a value", c->name, o->name);
}

int gp_cli_parse(const gp_cli_cmd *c, int argc, char **argv, gp_cli_args **out) {
    *out = NULL;
    gp_cli_args *a = calloc(1, sizeof *a);
    given *v = calloc((size_t)(argc > 0 ? argc : 1), sizeof *v);
    if (!a || !v) {
        free(a);
        free(v);
        return gp_cli_usage_error("out of memory");
    }
    a->cmd = c;
    a->v = v;
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        const char *s = argv[i], *val = NULL;
        const gp_cli_opt *o = NULL;
        int inline_val = 0;
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            gp_cli_help(c, stdout);
            gp_cli_args_free(a);
            return GP_CLI_EXIT_OK;
        }
        if (s[0] == '-' && s[1] == '-' && s[2]) {
            const char *name = s + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(c, name, len);
            if (!o) {
                char word[128];
                snprintf(word, sizeof word, "%.*s", (int)(len < 127 ? len : 127), name);
                rc = gp_cli_unknown_option(c, word);
                break;
            }
            if (eq) {
                val = eq + 1;
                inline_val = 1;
            }
        } else if (s[0] == '-' && s[1] && s[1] != '-' && !(s[1] >= '0' && s[1] <= '9')) {
            o = find_short(c, s[1]);
            if (!o) {
                rc = gp_cli_usage_error("%s: unknown option -%c (see gpath %s --help)", c->name,
                                        s[1], c->name);
                break;
            }
            if (s[2]) {
                val = s[2] == '=' ? s + 3 : s + 2;
                inline_val = 1;
            }
        } else {
            rc = gp_cli_usage_error("%s: unexpected argument '%s' (options start with - or --; "
                                    "see gpath %s --help)",
                                    c->name, s, c->name);
            break;
        }
        if (!o->arg) {
            if (inline_val) {
                rc = gp_cli_usage_error("%s: option --%s takes no value", c->name, o->name);
                break;
            }
        } else if (!inline_val) {
            if (i + 1 >= argc) {
                rc = need_value(c, o);
                break;
            }
            val = argv[++i];
        }
        if (o->arg && !*val) {
            rc = need_value(c, o);
            break;
        }
        a->v[a->n].opt = o;
        a->v[a->n].value = val;
        a->n++;
    }
    for (size_t k = 0; k < c->nopts && !rc; k++) {
        const gp_cli_opt *o = &c->opts[k];
        if (!(o->flags & GP_OPT_REQUIRED) || gp_cli_str(a, o->name) || gp_cli_flag(a, o->name))
            continue;
        rc = o->example ? gp_cli_usage_error("%s: missing parameter --%s (e.g. --%s %s; see gpath "
                                             "%s --help)",
                                             c->name, o->name, o->name, o->example, c->name)
                        : gp_cli_usage_error("%s: missing parameter --%s (see gpath %s --help)",
                                             c->name, o->name, c->name);
    }
    if (rc) {
        gp_cli_args_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void gp_cli_args_free(gp_cli_args *a) {
    if (!a) return;
    free(a->v);
    free(a);
}

const gp_cli_cmd *gp_cli_command(const gp_cli_args *a) { return a->cmd; }

const char *gp_cli_str(const gp_cli_args *a, const char *name) {
    const char *r = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].value && strcmp(a->v[i].opt->name, name) == 0) r = a->v[i].value;
    return r;
}

int gp_cli_flag(const gp_cli_args *a, const char *name) {
    for (size_t i = 0; i < a->n; i++)
        if (!a->v[i].opt->arg && strcmp(a->v[i].opt->name, name) == 0) return 1;
    return 0;
}

size_t gp_cli_all(const gp_cli_args *a, const char *name, const char **out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].value && strcmp(a->v[i].opt->name, name) == 0) {
            if (k < cap) out[k] = a->v[i].value;
            k++;
        }
    return k;
}

static const gp_cli_opt *opt_of(const gp_cli_args *a, const char *name) {
    return find_long(a->cmd, name, strlen(name));
}

static int bad_value(const gp_cli_args *a, const char *name, const char *s, const char *what) {
    const gp_cli_opt *o = opt_of(a, name);
    if (o && o->example)
        return gp_cli_usage_error("--%s: '%s' %s (e.g. --%s %s)", name, s, what, name, o->example);
    return gp_cli_usage_error("--%s: '%s' %s", name, s, what);
}

int gp_cli_u64(const gp_cli_args *a, const char *name, uint64_t def, uint64_t min, uint64_t max,
               uint64_t *out) {
    const char *s = gp_cli_str(a, name);
    if (!s) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    if (*s == '-') return bad_value(a, name, s, "must not be negative");
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end) return bad_value(a, name, s, "is not a non-negative integer");
    if (v < min || v > max) {
        char what[96];
        snprintf(what, sizeof what, "is outside [%llu, %llu]", (unsigned long long)min,
                 (unsigned long long)max);
        return bad_value(a, name, s, what);
    }
    *out = v;
    return 0;
}

int gp_cli_double(const gp_cli_args *a, const char *name, double def, double min, double max,
                  double *out) {
    const char *s = gp_cli_str(a, name);
    if (!s) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) return bad_value(a, name, s, "is not a number");
    if (v < min || v > max) {
        char what[96];
        snprintf(what, sizeof what, "is outside [%g, %g]", min, max);
        return bad_value(a, name, s, what);
    }
    *out = v;
    return 0;
}
