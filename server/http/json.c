/* json.c - compact JSON text of a cJSON tree, byte for byte cJSON_PrintUnformatted's (json.h).
 *
 * Why: an OSRM route answer is a dozen numbers, and cJSON prints each with the format "%1.15g",
 * then reads it back with sscanf to check it: 9% of the server's CPU time per route request at 64
 * connections (perf, Liechtenstein, overview=false), more than the CCH query. The numbers the
 * answers carry are decimals of a few places (gp_round_unit: tenths, coordinates to 10^-6): when
 * d is the double nearest k / 10^j for an integer k, j <= 6 and 10^-4 <= |d| < 10^9, "%1.15g"
 * prints exactly that decimal (k has at most 15 digits and a decimal of 15 significant digits
 * survives the trip through a double), without exponent or trailing zeros (j is the smallest
 * such), and it reads back as d, so cJSON keeps it. Those are written here from k; every other
 * number goes through the same printf calls as cJSON's.
 */
#include "server/http/json.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef gp_json_out jbuf;

static int reserve(jbuf *b, size_t more) {
    if (b->bad) return 0;
    if (b->len + more + 2 <= b->cap) return 1; /* room for the NUL and one spare byte */
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + more + 2) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->bad = b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

static void put(jbuf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Decimal digits of u into out (no NUL); returns their count. */
static size_t u64_digits(uint64_t u, char *out) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/* cJSON 1.7.15's compare_double */
static int close_enough(double a, double b) {
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= m * DBL_EPSILON;
}

static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

/* The fast form described above; 0 when d is not such a decimal. The smallest such j: 0 and 1
 * (integers, tenths) tried as such, then found from the 6 places alone: d * 10^6 is within 0.23
 * of an integer k when d is nearest k / 10^6 (|k| < 10^15, each rounding half an ulp), so
 * nearbyint finds k; if any j <= 6 fits, j = 6 does (k / 10^j and k * 10^(6-j) / 10^6 are one
 * number, rounded once), and j fits exactly when the last 6 - j digits of k are zeros (then
 * nearbyint(d * 10^j) is k / 10^(6-j) by the same bound). */
static size_t short_decimal(double d, char *out) {
    double a = fabs(d);
    if (!(a >= 1e-4 && a < 1e9)) return 0;
    double k;
    int j;
    if ((k = nearbyint(d)) == d) j = 0;
    else if ((k = nearbyint(d * 10)) / 10 == d) j = 1;
    else if ((k = nearbyint(d * 1e6)) / 1e6 == d) j = 6;
    else return 0;
    uint64_t u = (uint64_t)fabs(k);
    while (j > 2 && u % 10 == 0) u /= 10, j--;
    uint64_t ip = u / (uint64_t)p10[j], fp = u % (uint64_t)p10[j];
    size_t n = 0;
    if (d < 0) out[n++] = '-';
    n += u64_digits(ip, out + n);
    if (j) {
        out[n++] = '.';
        for (int i = j - 1; i >= 0; i--) out[n + (size_t)i] = (char)('0' + fp % 10), fp /= 10;
        n += (size_t)j;
    }
    return n;
}

static void number(jbuf *b, double d) {
    char s[32];
    size_t n;
    if (isnan(d) || isinf(d)) {
        put(b, "null", 4);
        return;
    }
    if (d == 0) {
        put(b, signbit(d) ? "-0" : "0", signbit(d) ? 2 : 1);
        return;
    }
    if ((n = short_decimal(d, s)) == 0) {
        int k = snprintf(s, sizeof s, "%1.15g", d);
        double test = 0;
        if (sscanf(s, "%lg", &test) != 1 || !close_enough(test, d))
            k = snprintf(s, sizeof s, "%1.17g", d);
        if (k < 0 || k > 25) { /* cJSON's buffer is 26 bytes: it fails the print */
            b->bad = 1;
            return;
        }
        n = (size_t)k;
    }
    put(b, s, n);
}

static void string(jbuf *b, const char *str) {
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t len = strlen((const char *)s);
    if (!reserve(b, 2 + 6 * len)) return;
    char *o = b->p + b->len;
    *o++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c >= 32 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default: o += snprintf(o, 6, "u%04x", c); break;
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->p);
}

static void value(jbuf *b, const cJSON *item) {
    if (b->bad) return;
    switch (item->type & 0xFF) {
    case cJSON_NULL: put(b, "null", 4); return;
    case cJSON_False: put(b, "false", 5); return;
    case cJSON_True: put(b, "true", 4); return;
    case cJSON_Number: number(b, item->valuedouble); return;
    case cJSON_Raw:
        if (!item->valuestring) b->bad = 1;
        else put(b, item->valuestring, strlen(item->valuestring));
        return;
    case cJSON_String: string(b, item->valuestring); return;
    case cJSON_Array:
    case cJSON_Object: {
        int obj = (item->type & 0xFF) == cJSON_Object;
        put(b, obj ? "{" : "[", 1);
        for (const cJSON *c = item->child; c && !b->bad; c = c->next) {
            if (c != item->child) put(b, ",", 1);
            if (obj) {
                string(b, c->string);
                put(b, ":", 1);
            }
            value(b, c);
        }
        put(b, obj ? "}" : "]", 1);
        return;
    }
    default: b->bad = 1; return;
    }
}

int gp_json_append(const cJSON *item, char **buf, size_t *len, size_t *cap) {
    jbuf b = {*buf, *len, *cap, 0, 0};
    if (item) value(&b, item);
    *buf = b.p;
    *cap = b.cap;
    if (!item || b.bad) return b.oom ? -2 : -1; /* *len stays: the partial text is dropped */
    *len = b.len;
    return 0;
}

void gp_json_put_raw(gp_json_out *o, const char *s, size_t n) { put(o, s, n); }

void gp_json_put_num(gp_json_out *o, double d) { number(o, d); }

void gp_json_put_str(gp_json_out *o, const char *s) { string(o, s); }

void gp_json_put_tree(gp_json_out *o, const cJSON *item) {
    if (item) value(o, item);
    else o->bad = 1;
}

int gp_json_out_reserve(gp_json_out *o, size_t n) { return reserve(o, n); }

/* item as object's member under the literal key; NULL (item freed) when either is missing. */
static cJSON *add_cs(cJSON *object, const char *key, cJSON *item) {
    if (item && cJSON_AddItemToObjectCS(object, key, item)) return item;
    cJSON_Delete(item);
    return NULL;
}

cJSON *gp_json_add_number(cJSON *object, const char *key, double number) {
    return add_cs(object, key, cJSON_CreateNumber(number));
}

cJSON *gp_json_add_string(cJSON *object, const char *key, const char *string) {
    return add_cs(object, key, cJSON_CreateString(string));
}

cJSON *gp_json_add_array(cJSON *object, const char *key) {
    return add_cs(object, key, cJSON_CreateArray());
}

/* ---- reading JSON text ---- */

void gp_json_scan_ws(gp_json_scan *x) {
    while (x->p < x->e && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r')) x->p++;
}

int gp_json_scan_char(gp_json_scan *x, char c) {
    gp_json_scan_ws(x);
    if (x->p < x->e && *x->p == c) {
        x->p++;
        return 1;
    }
    return 0;
}

static const double pow10_exact[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* At most 15 digits and no exponent: digits / 10^decimals, both exact doubles, so one correctly
 * rounded division gives the correctly rounded decimal, strtod's double (Clinger's fast path). */
int gp_json_scan_num(gp_json_scan *x, double *v) {
    gp_json_scan_ws(x);
    const char *s = x->p, *p = s, *e = x->e;
    int neg = p < e && *p == '-', digits = 0, decimals = 0, expo = 0;
    uint64_t m = 0;
    p += neg;
    if (p >= e || *p < '0' || *p > '9') return 0;
    if (*p == '0') p++, digits++;
    else
        for (; p < e && *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 16) m = m * 10 + (uint64_t)(*p - '0'); /* (no wrap past that) */
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        for (; p < e && *p >= '0' && *p <= '9'; p++, digits++, decimals++)
            if (digits < 16) m = m * 10 + (uint64_t)(*p - '0');
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        expo = 1;
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p - s > 63) return 0;
    if (!expo && digits <= 15) {
        double d = decimals ? (double)m / pow10_exact[decimals] : (double)m;
        *v = neg ? -d : d;
    } else {
        char buf[64];
        memcpy(buf, s, (size_t)(p - s));
        buf[p - s] = '\0';
        *v = strtod(buf, NULL);
    }
    x->p = p;
    return 1;
}

char *gp_json_print(const cJSON *item, size_t *len) {
    jbuf b = {0};
    if (!item) return NULL;
    value(&b, item);
    if (!b.bad && !reserve(&b, 0)) b.bad = 1;
    if (b.bad) {
        free(b.p);
        return NULL;
    }
    b.p[b.len] = '\0';
    if (len) *len = b.len;
    return b.p;
}
