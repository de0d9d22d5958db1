/* tilecache.c - the vector tile cache and answer of tilecache.h: one process-wide LRU under a
 * mutex (a hash of keys into a doubly linked list, most recent first), bounded by tile_cache_mb
 * counting each tile's plain and gzip bytes. A tile is built outside the lock; two requests for
 * the same missing tile may both build it (the second store replaces nothing: the first wins).
 */
#include "server/tilecache.h"

#include "server/http/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key;
    char *raw, *gz; /* gz NULL when gzip is not smaller */
    size_t raw_len, gz_len, bytes;
    uint64_t hash; /* content hash of raw: the ETag */
    struct entry *prev, *next, *hnext;
} entry;

#define NBUCKET 4096
static struct {
    pthread_mutex_t mu;
    entry *bucket[NBUCKET];
    entry *head, *tail; /* most / least recently used */
    size_t bytes;
} C = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t tile_hash(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static void lru_unlink(entry *e) {
    if (e->prev) e->prev->next = e->next;
    else C.head = e->next;
    if (e->next) e->next->prev = e->prev;
    else C.tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_front(entry *e) {
    e->next = C.head;
    if (C.head) C.head->prev = e;
    C.head = e;
    if (!C.tail) C.tail = e;
}

static void entry_free(entry *e) {
    if (!e) return;
    free(e->key);
    free(e->raw);
    free(e->gz);
    free(e);
}

/* Removes e from the hash and the list and frees it (lock held). */
static void evict(entry *e) {
    entry **pp = &C.bucket[tile_hash(e->key, strlen(e->key)) % NBUCKET];
    while (*pp && *pp != e) pp = &(*pp)->hnext;
    if (*pp) *pp = e->hnext;
    lru_unlink(e);
    C.bytes -= e->bytes;
    entry_free(e);
}

void gp_tile_cache_clear(void) {
    pthread_mutex_lock(&C.mu);
    while (C.tail) evict(C.tail);
    pthread_mutex_unlock(&C.mu);
}

static entry *find(const char *key) { /* lock held */
    for (entry *e = C.bucket[tile_hash(key, strlen(key)) % NBUCKET]; e; e = e->hnext)
        if (!strcmp(e->key, key)) return e;
    return NULL;
}

/* Copies what the request needs out of e (lock held): the body it gets and the hash. */
static int take(const entry *e, int gz, char **body, size_t *len, int *is_gz, uint64_t *hash) {
    const char *src = gz && e->gz ? e->gz : e->raw;
    *len = gz && e->gz ? e->gz_len : e->raw_len;
    *is_gz = gz && e->gz;
    *hash = e->hash;
    *body = malloc(*len ? *len : 1);
    if (!*body) return 0;
    if (*len) memcpy(*body, src, *len);
    return 1;
}

/* Stores a new entry (takes raw and gz); drops least recently used ones past the budget. */
static void store(const char *key, char *raw, size_t raw_len, char *gz, size_t gz_len,
                  uint64_t hash, size_t budget) {
    entry *e = budget ? malloc(sizeof *e) : NULL;
    char *k = e ? strdup(key) : NULL;
    if (!k) {
        free(e);
        free(raw);
        free(gz);
        return;
    }
    *e = (entry){.key = k,
                 .raw = raw,
                 .gz = gz,
                 .raw_len = raw_len,
                 .gz_len = gz_len,
                 .bytes = raw_len + gz_len + strlen(key) + sizeof *e,
                 .hash = hash};
    pthread_mutex_lock(&C.mu);
    if (find(key) || e->bytes > budget) {
        pthread_mutex_unlock(&C.mu);
        entry_free(e);
        return;
    }
    entry **b = &C.bucket[tile_hash(key, strlen(key)) % NBUCKET];
    e->hnext = *b;
    *b = e;
    lru_front(e);
    C.bytes += e->bytes;
    while (C.bytes > budget && C.tail) evict(C.tail);
    pthread_mutex_unlock(&C.mu);
}

static int etag_matches(const char *inm, const char *tag) {
    if (!inm) return 0;
    if (!strcmp(inm, "*")) return 1;
    /* the hash part without quotes: both representations (plain, -gz) of one tile match */
    char h[24];
    snprintf(h, sizeof h, "%.16s", tag + 1);
    return strstr(inm, h) != NULL;
}

int gp_tile_answer(gp_req *r, const char *key, const char *ctype, gp_tile_build_fn build, void *ctx,
                   gp_err *err) {
    const gp_config *cfg = gp_http_config();
    size_t budget = cfg && cfg->tile_cache_mb > 0 ? (size_t)cfg->tile_cache_mb << 20 : 0;
    const char *ae = gp_req_header(r, "Accept-Encoding");
    int want_gz = ae && gp_accepts_gzip(ae);
    char *body = NULL;
    size_t len = 0;
    int is_gz = 0, hit = 0;
    uint64_t hash = 0;
    if (budget) {
        pthread_mutex_lock(&C.mu);
        entry *e = find(key);
        if (e) {
            lru_unlink(e);
            lru_front(e);
            hit = take(e, want_gz, &body, &len, &is_gz, &hash);
        }
        pthread_mutex_unlock(&C.mu);
    }
    if (!hit) {
        size_t raw_len = 0;
        char *raw = build(ctx, &raw_len, err);
        if (!raw) return err->code ? err->code : GP_ENOMEM;
        size_t gz_len = 0;
        char *gz = raw_len ? gp_gzip(raw, raw_len, &gz_len) : NULL;
        if (gz && gz_len >= raw_len) {
            free(gz);
            gz = NULL;
            gz_len = 0;
        }
        hash = tile_hash(raw, raw_len);
        is_gz = want_gz && gz;
        len = is_gz ? gz_len : raw_len;
        body = malloc(len ? len : 1);
        if (!body) {
            free(raw);
            free(gz);
            return gp_err_set(err, GP_ENOMEM, "out of memory encoding a tile");
        }
        if (len) memcpy(body, is_gz ? gz : raw, len);
        store(key, raw, raw_len, gz, gz_len, hash, budget);
    }
    char tag[40];
    snprintf(tag, sizeof tag, "\"%016llx%s\"", (unsigned long long)hash, is_gz ? "-gz" : "");
    gp_req_add_header(r, "ETag", tag);
    gp_req_add_header(r, "Cache-Control", "no-cache");
    gp_req_add_header(r, "Vary", "Accept-Encoding");
    gp_req_add_header(r, "X-Gpath-Cache", hit ? "hit" : "miss");
    if (etag_matches(gp_req_header(r, "If-None-Match"), tag)) {
        free(body);
        gp_http_text(r, 304, ctype, "", 0);
        return GP_OK;
    }
    if (is_gz) gp_req_add_header(r, "Content-Encoding", "gzip");
    gp_http_send(r, 200, ctype, body, len);
    return GP_OK;
}
