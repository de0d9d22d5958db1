/* util.c - pure helpers of the HTTP layer (see util.h): no sockets, no global state
 * except the request-id generator's per-thread seed. */
#include "server/http/util.h"

#include "graph/gp.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

size_t gp_url_decode(char *s, size_t len, int plus_is_space, int *saw_nul) {
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int hi, lo;
        if (c == '%' && i + 2 < len && (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
            (lo = hexval((unsigned char)s[i + 2])) >= 0) {
            c = (unsigned char)(hi * 16 + lo);
            if (c == 0 && saw_nul) *saw_nul = 1;
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        s[o++] = (char)c;
    }
    s[o] = '\0';
    return o;
}

int gp_utf8_repair(const char *s, char *out, size_t size) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    int repaired = 0;
    for (size_t i = 0; i < n;) {
        size_t k = gp_utf8_seq(p + i, n - i);
        const char *src = (const char *)p + i;
        size_t w = k;
        if (k == 0) {
            src = "\xef\xbf\xbd"; /* U+FFFD */
            w = 3;
            k = 1;
            repaired = 1;
        }
        if (o + w + 1 > size) break;
        memcpy(out + o, src, w);
        o += w;
        i += k;
    }
    out[o] = '\0';
    return repaired;
}

void gp_log_escape(const char *s, size_t len, char *out, size_t size) {
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 4 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '%') {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}

int gp_query_key_secret(const char *key) {
    static const char *const words[] = {"token", "password",  "passwd",     "secret", "key",
                                        "auth",  "signature", "credential", "session"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(key, words[i])) return 1;
    return 0;
}

int gp_request_id_ok(const char *id) {
    size_t n = 0;
    for (; id[n]; n++) {
        unsigned char c = (unsigned char)id[n];
        if (n == 64 || !(isalnum(c) || c == '.' || c == '_' || c == ':' || c == '-')) return 0;
    }
    return n > 0;
}

/* splitmix64: the next output of the sequence of *state (modulo 2^64 by design) */
static uint64_t id_mix(uint64_t *state) {
    uint64_t x = (*state += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void gp_request_id_new(char *out, size_t size) {
    /* one getrandom per thread, not per request (a system call on every answer): the thread's
     * seed, then splitmix64's sequence from it (distinct outputs for 2^64 calls) */
    static _Thread_local uint64_t state;
    static _Thread_local int seeded;
    if (!seeded) {
        if (getrandom(&state, sizeof state, GRND_NONBLOCK) != (ssize_t)sizeof state) {
            /* no entropy yet (early boot): time, pid and this thread's address */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            state = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
                    ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&state;
        }
        seeded = 1;
    }
    uint64_t x = id_mix(&state);
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 15; i >= 0 && o + 1 < size; i--) out[o++] = hex[(x >> (4 * i)) & 15];
    out[o] = '\0';
}

/* Next comma-separated token of s: [*b, *e) trimmed; returns the rest or NULL at the end. */
static const char *next_token(const char *s, const char **b, const char **e) {
    if (!s || !*s) return NULL;
    const char *c = strchr(s, ',');
    const char *end = c ? c : s + strlen(s);
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *t = end;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t')) t--;
    *b = s;
    *e = t;
    return c ? c + 1 : end;
}

int gp_accepts_gzip(const char *ae) {
    const char *b, *e;
    while ((ae = next_token(ae, &b, &e))) {
        const char *semi = memchr(b, ';', (size_t)(e - b));
        const char *ne = semi ? semi : e;
        while (ne > b && (ne[-1] == ' ' || ne[-1] == '\t')) ne--;
        size_t nl = (size_t)(ne - b);
        if (!((nl == 4 && strncasecmp(b, "gzip", 4) == 0) || (nl == 1 && *b == '*'))) continue;
        double q = 1;
        if (semi) {
            const char *p = semi + 1;
            while (p < e && (*p == ' ' || *p == '\t')) p++;
            if (e - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
                char num[16];
                size_t k = (size_t)(e - p - 2) < sizeof num - 1 ? (size_t)(e - p - 2)
                                                                : sizeof num - 1;
                memcpy(num, p + 2, k);
                num[k] = '\0';
                q = strtod(num, NULL);
            }
        }
        if (q > 0) return 1;
    }
    return 0;
}

int gp_cors_match(const char *list, const char *origin) {
    if (!list || !origin || !*origin) return 0;
    const char *b, *e;
    size_t ol = strlen(origin);
    while ((list = next_token(list, &b, &e))) {
        size_t n = (size_t)(e - b);
        if (n == 1 && *b == '*') return 1;
        if (n == ol && strncasecmp(b, origin, n) == 0) return 2;
    }
    return 0;
}

char *gp_gzip(const char *in, size_t n, size_t *out_len) {
    if (n > (size_t)UINT32_MAX / 2) return NULL;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    char *out = malloc(cap);
    if (!out) {
        deflateEnd(&z);
        return NULL;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

void gp_addr_str(const struct sockaddr *sa, char *out, size_t size) {
    if (!size) return;
    out[0] = '\0';
    if (sa && sa->sa_family == AF_INET && size >= INET_ADDRSTRLEN) {
        const unsigned char *b = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
        char *o = out;
        for (int i = 0; i < 4; i++) {
            unsigned v = b[i];
            if (i) *o++ = '.';
            if (v >= 100) *o++ = (char)('0' + v / 100);
            if (v >= 10) *o++ = (char)('0' + v / 10 % 10);
            *o++ = (char)('0' + v % 10);
        }
        *o = '\0';
    } else if (sa && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)size);
    } else if (sa && sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)size);
    }
}
