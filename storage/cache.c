/* cache.c - the SQLite distance-matrix cache (contract in cache.h).
 *
 * Blob layout (native byte order; the magic's byte-order mark makes a file from another endianness a
 * miss): header | src[ns] uint32 | dst[nt] uint32 (table only) | dist[ns*nt] uint64 | next[ns*nt]
 * uint32 (next_hops only). Blobs are written and read with SQLite's incremental blob I/O so a large
 * matrix goes straight between the caller's arrays and the database, without a staging copy.
 */
#include "storage/cache.h"

#include "storage/migrate.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CACHE_MAGIC 0x5854524d50470a01ull /* "\1\nGPMRTX" read little-endian; detects byte order */
#define CACHE_FORMAT 1u
#define ELEM_U64_DIST 1u
#define ELEM_BYTES 2u          /* a document: the request text, then the answer */
#define MAX_BLOB 1000000000ull /* SQLite's default SQLITE_MAX_LENGTH */

typedef struct blob_hdr {
    uint64_t magic;
    uint32_t format;
    uint32_t kind;
    uint64_t graph_hash;
    uint64_t list_hash; /* hash of the source/target lists (also in the key) */
    uint32_t rows, cols;
    uint32_t elem; /* ELEM_U64_DIST */
    uint32_t has_next;
    uint64_t payload;  /* bytes after the header */
    uint64_t checksum; /* over the payload segments */
} blob_hdr;

struct gp_cache {
    pthread_mutex_t mu;
    sqlite3 *db; /* NULL while disabled */
    char path[512];
    char error[512];
    uint64_t budget;
    uint64_t hits, misses, puts, evictions, recoveries;
    uint64_t retry_at_us; /* disabled because another process holds the file: reopen after this */
};

/* ---- hashing ---------------------------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* A fast non-cryptographic hash of n bytes (4 independent lanes of 8-byte words). */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed) {
    const unsigned char *b = p;
    uint64_t h[4] = {seed ^ 0x9e3779b97f4a7c15ull, seed + 0x632be59bd9b4e019ull,
                     seed ^ 0x85ebca77c2b2ae63ull, seed + 0xc2b2ae3d27d4eb4full};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, b + i, 32);
        for (int k = 0; k < 4; k++) h[k] = (h[k] ^ w[k]) * 0x9fb21c651e98df25ull + (h[k] >> 29);
    }
    uint64_t t = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        t = mix64(t ^ w);
    }
    uint64_t last = 0;
    if (i < n) memcpy(&last, b + i, n - i);
    return mix64(h[0] ^ mix64(h[1] ^ mix64(h[2] ^ mix64(h[3] ^ t ^ mix64(last ^ n)))));
}

static uint64_t list_hash(const gp_cache_key *k) {
    uint64_t h = mix64(((uint64_t)k->ns << 32) ^ k->nt ^ ((uint64_t)k->kind << 60));
    if (k->kind == GP_CACHE_TABLE) {
        h = hash_bytes(k->src, (size_t)k->ns * 4, h);
        h = hash_bytes(k->dst, (size_t)k->nt * 4, h ^ 0x5bd1e995ull);
    }
    return h;
}

static void key_text(const gp_cache_key *k, uint64_t lh, char *out, size_t cap) {
    snprintf(out, cap, "%016" PRIx64 ":%s:%016" PRIx64 ":%u:%u:%d", k->graph_hash,
             k->kind == GP_CACHE_TABLE ? "table" : "apsp", lh, k->ns, k->nt, k->next_hops ? 1 : 0);
}

static int key_valid(const gp_cache_key *k) {
    if (!k || (k->kind != GP_CACHE_TABLE && k->kind != GP_CACHE_APSP) || k->ns == 0 || k->nt == 0)
        return 0;
    if (k->kind == GP_CACHE_TABLE && (!k->src || !k->dst)) return 0;
    if (k->kind == GP_CACHE_APSP && k->ns != k->nt) return 0;
    return 1;
}

/* Payload segments in blob order; absent ones have len 0. */
typedef struct seg {
    void *p;
    uint64_t len;
} seg;

static int segments(const gp_cache_key *k, const uint64_t *dist, const uint32_t *next, seg s[4]) {
    uint64_t cells = (uint64_t)k->ns * k->nt;
    int table = k->kind == GP_CACHE_TABLE;
    s[0] = (seg){(void *)k->src, table ? (uint64_t)k->ns * 4 : 0};
    s[1] = (seg){(void *)k->dst, table ? (uint64_t)k->nt * 4 : 0};
    s[2] = (seg){(void *)dist, cells * 8};
    s[3] = (seg){(void *)next, k->next_hops ? cells * 4 : 0};
    return 4;
}

static uint64_t seg_checksum(uint64_t acc, const void *p, uint64_t len) {
    return mix64(acc ^ hash_bytes(p, (size_t)len, acc + len));
}

/* ---- connection management ------------------------------------------------------------------ */

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Damage means: move the file aside and start a new one. An I/O error counts too (a truncated or
 * vanished file reads short); for a cache, starting afresh is always safe. */
static int is_damage(int rc) {
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_IOERR;
}

static int exec_sql(sqlite3 *db, const char *sql) {
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Opens and checks path; on success c->db is set. Returns an SQLite code (damage codes matter) and
 * fills err for GP-level failures (newer schema: *refused = 1). */
static int open_db(gp_cache *c, int *refused, gp_err *err) {
    sqlite3 *db = NULL;
    *refused = 0;
    int rc = sqlite3_open_v2(
        c->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc != SQLITE_OK) {
        gp_err_set(err, GP_EDB, "cannot open cache %s: %s", c->path,
                   db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return rc;
    }
    /* no waiting: the only lock this connection can meet is another process's exclusive one,
     * which lasts until that process closes the cache (see locking_mode below) */
    sqlite3_busy_timeout(db, 0);
    sqlite3_extended_result_codes(db, 0);
    /* Exclusive locking before the first read of the file, so WAL mode never opens or maps the
     * shared-memory WAL index (PATH-shm): SQLite keeps it in this process's heap instead. A mapped
     * -shm is shared memory backed by a file, and a -shm truncated or emptied under the
     * running server (mmap_size=0 does not cover it) turned the next access into SIGBUS. With no
     * file mapped at all, any change to the three files is at worst a failed read() or write()
     * (SQLITE_IOERR / CORRUPT: recover() starts a new file). Cost: one process holds the cache file
     * from its first read to its close; another process opening it gets SQLITE_BUSY (a disabled
     * cache, retried every 10 s). Measured: reads and stores as fast as before (docs/storage.md). */
    if ((rc = exec_sql(db, "PRAGMA locking_mode=EXCLUSIVE")) != SQLITE_OK) goto fail;
    /* auto_vacuum only takes effect before the first table: a purge can then give space back. */
    /* big pages: a matrix blob is a chain of overflow pages, and fewer, larger ones read faster */
    exec_sql(db, "PRAGMA page_size=16384");
    if ((rc = exec_sql(db, "PRAGMA auto_vacuum=INCREMENTAL")) != SQLITE_OK ||
        (rc = exec_sql(db, "PRAGMA journal_mode=WAL")) != SQLITE_OK ||
        (rc = exec_sql(db, "PRAGMA synchronous=NORMAL")) != SQLITE_OK)
        goto fail;
    /* no memory-mapped I/O: a cache file truncated or shrunk under a running server would turn a
     * read of a mapped page into SIGBUS and take the service down; with read() the same damage is
     * a short read, SQLITE_CORRUPT / SQLITE_IOERR, and the file is moved aside (recover) */
    exec_sql(db, "PRAGMA mmap_size=0");
    /* instead, a larger page cache (64 MiB, SQLite's default is 2 MiB) keeps hot matrices in
     * memory: a warm 1000 x 1000 read costs 1.3 ms instead of 2.1 ms with read() alone (mmap:
     * 1.2 ms; bench/bench_cache.c, bench/results/2026-11-25-cpu2-AMD-EPYC-cache-read.md) */
    exec_sql(db, "PRAGMA cache_size=-65536");
    /* quick_check reads every page once: cheap next to the matrices it protects. */
    {
        sqlite3_stmt *st = NULL;
        rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL);
        if (rc != SQLITE_OK) goto fail;
        rc = sqlite3_step(st);
        int ok = rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
        int step_rc = rc;
        sqlite3_finalize(st);
        if (!ok) {
            rc = step_rc == SQLITE_ROW ? SQLITE_CORRUPT : step_rc;
            goto fail;
        }
    }
    gp_err lerr;
    gp_err_clear(&lerr);
    if (gp_migrate_sqlite(db, &lerr) != GP_OK) {
        int ec = sqlite3_errcode(db);
        if (is_damage(ec)) {
            rc = ec;
            goto fail;
        }
        if (strstr(lerr.msg, "is newer than")) *refused = 1;
        gp_err_set(err, GP_EDB, "%s: %s", c->path, lerr.msg);
        sqlite3_close(db);
        return SQLITE_ERROR;
    }
    c->db = db;
    return SQLITE_OK;
fail:
    gp_err_set(err, GP_EDB, "cache %s: %s", c->path, sqlite3_errstr(rc));
    sqlite3_close(db);
    return rc;
}

#define RETRY_US 10000000ull /* a cache locked by another process is tried again after 10 s */

/* Records why the cache is off; a file locked by another process (SQLITE_BUSY) is retried later. */
static void disable(gp_cache *c, int rc, const char *why) {
    snprintf(c->error, sizeof c->error, "%s", why);
    int busy = (rc & 0xff) == SQLITE_BUSY;
    c->retry_at_us = busy ? now_us() + RETRY_US : 0;
    GP_LOG(GP_LOG_ERROR, "cache disabled: %s%s", why,
           busy ? " (another process holds it; retried every 10 s)" : "");
}

/* Renames the damaged file (and its WAL / shared-memory files) aside. */
static void move_aside(gp_cache *c) {
    char stamp[32], to[600], from[600];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    /* never overwrite an earlier damaged copy from the same second */
    size_t sl = strlen(stamp);
    for (int n = 2; n < 1000; n++) {
        snprintf(to, sizeof to, "%s.corrupt-%s", c->path, stamp);
        if (access(to, F_OK) != 0) break;
        snprintf(stamp + sl, sizeof stamp - sl, "-%d", n);
    }
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s%s", c->path, suffix[i]);
        snprintf(to, sizeof to, "%s.corrupt-%s%s", c->path, stamp, suffix[i]);
        if (rename(from, to) != 0 && errno != ENOENT)
            GP_LOG(GP_LOG_WARN, "cache: cannot move %s aside: %s", from, strerror(errno));
    }
    GP_LOG(GP_LOG_WARN, "cache: %s is damaged; moved aside as %s.corrupt-%s, starting a new cache",
           c->path, c->path, stamp);
}

/* Called with the mutex held after an operation reported damage: move aside, reopen empty. */
static void recover(gp_cache *c) {
    if (c->db) sqlite3_close(c->db);
    c->db = NULL;
    move_aside(c);
    c->recoveries++;
    int refused;
    gp_err err;
    int rc = open_db(c, &refused, &err);
    if (rc != SQLITE_OK) disable(c, rc, err.msg);
}

/* Called with the mutex held while the cache is disabled because the file was locked: tries to
 * open it again, at most every RETRY_US. */
static void retry_open(gp_cache *c) {
    if (c->db || !c->retry_at_us || now_us() < c->retry_at_us) return;
    int refused;
    gp_err err;
    gp_err_clear(&err);
    int rc = open_db(c, &refused, &err);
    if (rc != SQLITE_OK) {
        c->retry_at_us = now_us() + RETRY_US;
        return;
    }
    c->retry_at_us = 0;
    c->error[0] = '\0';
    GP_LOG(GP_LOG_INFO, "cache: %s is free again; cache enabled", c->path);
}

gp_cache *gp_cache_open(const char *path, uint64_t budget_bytes, gp_err *err) {
    if (!path || !*path) {
        gp_err_set(err, GP_EINVAL, "cache path is empty");
        return NULL;
    }
    gp_cache *c = calloc(1, sizeof *c);
    if (!c) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->budget = budget_bytes;
    int refused;
    gp_err lerr;
    gp_err_clear(&lerr);
    int rc = open_db(c, &refused, &lerr);
    if (rc != SQLITE_OK && refused) {
        gp_err_set(err, GP_EDB, "%s", lerr.msg);
        gp_cache_close(c);
        return NULL;
    }
    if (rc != SQLITE_OK && (is_damage(rc) || (rc & 0xff) == SQLITE_IOERR)) {
        move_aside(c);
        c->recoveries++;
        rc = open_db(c, &refused, &lerr);
    }
    if (rc != SQLITE_OK) disable(c, rc, lerr.msg);
    return c;
}

void gp_cache_close(gp_cache *c) {
    if (!c) return;
    if (c->db) sqlite3_close(c->db);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---- get / put -------------------------------------------------------------------------------- */

static void delete_row(gp_cache *c, sqlite3_int64 rowid) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "DELETE FROM matrix WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, rowid);
        sqlite3_step(st);
    }
    sqlite3_finalize(st);
}

/* The row id of key (0 when absent); an SQLite code. */
static int find_row(gp_cache *c, const char *key, sqlite3_int64 *rowid) {
    sqlite3_stmt *st = NULL;
    *rowid = 0;
    int rc = sqlite3_prepare_v2(c->db, "SELECT id FROM matrix WHERE key = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) *rowid = sqlite3_column_int64(st, 0);
        rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    return rc;
}

/* A hit: the row becomes the most recently used (a busy database only costs LRU precision). */
static void touch_row(gp_cache *c, sqlite3_int64 rowid) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "UPDATE matrix SET last_used = ? WHERE id = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)now_us());
        sqlite3_bind_int64(st, 2, rowid);
        sqlite3_step(st);
    }
    sqlite3_finalize(st);
}

/* The end of a get (c->mu held, released here): r is the row reader's answer (1 hit, 0 miss or
 * *bad, -SQLite code), rc the lookup's SQLite code. A bad row is deleted, a hit becomes the most
 * recently used, damage moves the file aside. GP_OK on a hit, else GP_ENOTFOUND. */
static int get_end(gp_cache *c, const char *key, sqlite3_int64 rowid, int r, int bad, int rc) {
    if (r < 0) rc = -r;
    else if (bad) {
        GP_LOG(GP_LOG_WARN, "cache: entry %s failed its header/checksum check; deleted", key);
        delete_row(c, rowid);
    } else if (r == 1) touch_row(c, rowid);
    int hit = r == 1 && !bad;
    if (rc != SQLITE_OK && is_damage(rc)) recover(c);
    else if (rc != SQLITE_OK) GP_LOG(GP_LOG_WARN, "cache get: %s", sqlite3_errstr(rc));
    if (hit) c->hits++;
    else c->misses++;
    pthread_mutex_unlock(&c->mu);
    return hit ? GP_OK : GP_ENOTFOUND;
}

/* Reads and verifies one row into the outputs; returns 1 on a verified hit, 0 on a mismatch
 * (*bad = 1: the row is unusable), or -SQLite code on a database error. */
static int read_row(gp_cache *c, sqlite3_int64 rowid, const gp_cache_key *k, uint64_t lh,
                    uint64_t *dist, uint32_t *next, int *bad) {
    sqlite3_blob *b = NULL;
    *bad = 0;
    int rc = sqlite3_blob_open(c->db, "main", "matrix_blob", "data", rowid, 0, &b);
    if (rc != SQLITE_OK) return -rc;
    int out = 0;
    uint32_t *lists = NULL;
    blob_hdr h;
    seg s[4];
    segments(k, dist, next, s);
    uint64_t payload = 0;
    for (int i = 0; i < 4; i++) payload += s[i].len;
    uint64_t total = (uint64_t)sqlite3_blob_bytes(b);
    if (total < sizeof h) {
        *bad = 1;
        goto done;
    }
    if ((rc = sqlite3_blob_read(b, &h, sizeof h, 0)) != SQLITE_OK) {
        out = -rc;
        goto done;
    }
    if (h.magic != CACHE_MAGIC || h.format != CACHE_FORMAT || h.kind != (uint32_t)k->kind ||
        h.graph_hash != k->graph_hash || h.list_hash != lh || h.rows != k->ns || h.cols != k->nt ||
        h.elem != ELEM_U64_DIST || h.has_next != (k->next_hops ? 1u : 0u) || h.payload != payload ||
        total != sizeof h + payload) {
        *bad = 1;
        goto done;
    }
    /* The source/target lists are read into scratch and compared; the matrices go straight into
     * the caller's arrays. */
    if (s[0].len + s[1].len) {
        lists = malloc(s[0].len + s[1].len);
        if (!lists) goto done;
    }
    uint64_t off = sizeof h, acc = CACHE_MAGIC;
    for (int i = 0; i < 4; i++) {
        if (!s[i].len) continue;
        void *dstp = i < 2 ? (void *)((char *)lists + (i == 1 ? s[0].len : 0)) : s[i].p;
        /* lengths fit in int: put never stores a blob over MAX_BLOB */
        if ((rc = sqlite3_blob_read(b, dstp, (int)s[i].len, (int)off)) != SQLITE_OK) {
            out = -rc;
            goto done;
        }
        if (i < 2 && memcmp(dstp, s[i].p, s[i].len) != 0) {
            *bad = 1;
            goto done;
        }
        acc = seg_checksum(acc, dstp, s[i].len);
        off += s[i].len;
    }
    if (acc != h.checksum) {
        *bad = 1;
        goto done;
    }
    out = 1;
done:
    free(lists);
    sqlite3_blob_close(b);
    return out;
}

int gp_cache_get(gp_cache *c, const gp_cache_key *k, uint64_t *dist, uint32_t *next) {
    if (!c || !key_valid(k) || !dist || (k->next_hops && !next)) return GP_ENOTFOUND;
    if ((uint64_t)k->ns * k->nt * 8 > MAX_BLOB) return GP_ENOTFOUND; /* never stored */
    uint64_t lh = list_hash(k);
    char key[160];
    key_text(k, lh, key, sizeof key);
    pthread_mutex_lock(&c->mu);
    int rc = SQLITE_OK, r = 0, bad = 0;
    sqlite3_int64 rowid = 0;
    retry_open(c);
    if (c->db && (rc = find_row(c, key, &rowid)) == SQLITE_OK && rowid)
        r = read_row(c, rowid, k, lh, dist, next, &bad);
    return get_end(c, key, rowid, r, bad, rc);
}

static int write_blob(sqlite3 *db, sqlite3_int64 rowid, const blob_hdr *h, const seg s[4]) {
    sqlite3_blob *b = NULL;
    int rc = sqlite3_blob_open(db, "main", "matrix_blob", "data", rowid, 1, &b);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_blob_write(b, h, sizeof *h, 0);
    uint64_t off = sizeof *h;
    for (int i = 0; i < 4 && rc == SQLITE_OK; i++) {
        if (!s[i].len) continue;
        rc = sqlite3_blob_write(b, s[i].p, (int)s[i].len, (int)off);
        off += s[i].len;
    }
    int crc = sqlite3_blob_close(b);
    return rc != SQLITE_OK ? rc : crc;
}

static int evict(gp_cache *c, const char *keep) {
    if (!c->budget) return SQLITE_OK;
    for (;;) {
        sqlite3_stmt *st = NULL;
        int rc =
            sqlite3_prepare_v2(c->db, "SELECT COALESCE(SUM(bytes), 0) FROM matrix", -1, &st, NULL);
        if (rc != SQLITE_OK) return rc;
        rc = sqlite3_step(st);
        uint64_t total = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW) return rc;
        if (total <= c->budget) return SQLITE_OK;
        rc = sqlite3_prepare_v2(c->db,
                                "DELETE FROM matrix WHERE id = (SELECT id FROM matrix "
                                "WHERE key <> ? ORDER BY last_used, id LIMIT 1)",
                                -1, &st, NULL);
        if (rc != SQLITE_OK) return rc;
        sqlite3_bind_text(st, 1, keep, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        int changed = sqlite3_changes(c->db);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return rc;
        if (!changed) return SQLITE_OK; /* only the new entry is left */
        c->evictions++;
    }
}

/* One entry's metadata row. */
typedef struct row {
    const char *key, *graph, *version, *kind;
    uint32_t rows, cols;
} row;

/* Stores (replacing the same key) one entry whose blob is h then the segments s, and evicts to the
 * budget, in one transaction. */
static int store_row(gp_cache *c, const row *r, const blob_hdr *h, const seg s[4], gp_err *err) {
    uint64_t bytes = sizeof *h + h->payload;
    pthread_mutex_lock(&c->mu);
    int rc = SQLITE_OK, status = GP_OK;
    retry_open(c);
    if (!c->db) goto out;
    if ((rc = exec_sql(c->db, "BEGIN IMMEDIATE")) != SQLITE_OK) goto out;
    sqlite3_stmt *st = NULL;
    /* replace: the delete trigger drops the old blob (INSERT OR REPLACE would not fire it) */
    rc = sqlite3_prepare_v2(c->db, "DELETE FROM matrix WHERE key = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, r->key, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(c->db,
                                "INSERT INTO matrix (key, graph, version, kind, rows, cols, bytes, "
                                "created_at, last_used) VALUES (?,?,?,?,?,?,?,?,?)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        uint64_t t = now_us();
        sqlite3_bind_text(st, 1, r->key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, r->graph ? r->graph : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, r->version, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, r->kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, r->rows);
        sqlite3_bind_int64(st, 6, r->cols);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)bytes);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)t);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)t);
        rc = sqlite3_step(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    st = NULL;
    sqlite3_int64 id = sqlite3_last_insert_rowid(c->db);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(c->db, "INSERT INTO matrix_blob (id, data) VALUES (?, ?)", -1, &st,
                                NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_zeroblob(st, 2, (int)bytes);
        rc = sqlite3_step(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = write_blob(c->db, id, h, s);
    if (rc == SQLITE_OK) rc = evict(c, r->key);
    if (rc == SQLITE_OK) rc = exec_sql(c->db, "COMMIT");
    if (rc != SQLITE_OK) exec_sql(c->db, "ROLLBACK");
    else c->puts++;
    /* Move the new pages from the WAL into the database file, so the WAL stays small and a blob is
     * read from the database file rather than found frame by frame in the WAL (a put follows a
     * computation that took far longer). */
    if (rc == SQLITE_OK)
        sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
out:
    if (rc != SQLITE_OK) {
        status = gp_err_set(err, GP_EDB, "cache put: %s", sqlite3_errstr(rc));
        GP_LOG(GP_LOG_WARN, "%s", err ? err->msg : "cache put failed");
        if (is_damage(rc)) recover(c);
    }
    pthread_mutex_unlock(&c->mu);
    return status;
}

int gp_cache_put(gp_cache *c, const gp_cache_key *k, const uint64_t *dist, const uint32_t *next,
                 gp_err *err) {
    if (!c) return GP_OK;
    if (!key_valid(k) || !dist || (k->next_hops && !next))
        return gp_err_set(err, GP_EINVAL, "cache put: bad key or matrix");
    seg s[4];
    segments(k, dist, next, s);
    blob_hdr h;
    memset(&h, 0, sizeof h);
    h.magic = CACHE_MAGIC;
    h.format = CACHE_FORMAT;
    h.kind = (uint32_t)k->kind;
    h.graph_hash = k->graph_hash;
    h.list_hash = list_hash(k);
    h.rows = k->ns;
    h.cols = k->nt;
    h.elem = ELEM_U64_DIST;
    h.has_next = k->next_hops ? 1 : 0;
    uint64_t acc = CACHE_MAGIC;
    for (int i = 0; i < 4; i++) {
        h.payload += s[i].len;
        if (s[i].len) acc = seg_checksum(acc, s[i].p, s[i].len);
    }
    h.checksum = acc;
    uint64_t bytes = sizeof h + h.payload;
    if ((c->budget && bytes > c->budget) || bytes > MAX_BLOB) {
        GP_LOG(GP_LOG_DEBUG, "cache: %" PRIu64 "-byte matrix over the budget, not stored", bytes);
        return GP_OK;
    }
    char key[160], version[17];
    key_text(k, h.list_hash, key, sizeof key);
    snprintf(version, sizeof version, "%016" PRIx64, k->graph_hash);
    row r = {key, k->graph, version, k->kind == GP_CACHE_TABLE ? "table" : "apsp", k->ns, k->nt};
    return store_row(c, &r, &h, s, err);
}

/* ---- documents -------------------------------------------------------------------------------- */

static void doc_key(uint64_t graph_hash, const char *kind, uint64_t rh, char *out, size_t cap) {
    snprintf(out, cap, "%016" PRIx64 ":doc-%.40s:%016" PRIx64, graph_hash, kind, rh);
}

int gp_cache_put_doc(gp_cache *c, const char *graph, uint64_t graph_hash, const char *kind,
                     const char *req, const void *data, size_t len, gp_err *err) {
    if (!c) return GP_OK;
    size_t rl = req ? strlen(req) : 0;
    if (!kind || !req || (!data && len) || rl > MAX_BLOB || len > MAX_BLOB)
        return gp_err_set(err, GP_EINVAL, "cache put: bad document");
    seg s[4] = {{(void *)req, rl}, {(void *)data, len}, {NULL, 0}, {NULL, 0}};
    blob_hdr h;
    memset(&h, 0, sizeof h);
    h.magic = CACHE_MAGIC;
    h.format = CACHE_FORMAT;
    h.kind = GP_CACHE_DOC;
    h.graph_hash = graph_hash;
    h.list_hash = hash_bytes(req, rl, 0x646f63ull);
    h.rows = (uint32_t)rl;
    h.cols = (uint32_t)len;
    h.elem = ELEM_BYTES;
    h.payload = rl + len;
    h.checksum = CACHE_MAGIC;
    for (int i = 0; i < 2; i++)
        if (s[i].len) h.checksum = seg_checksum(h.checksum, s[i].p, s[i].len);
    uint64_t bytes = sizeof h + h.payload;
    if ((c->budget && bytes > c->budget) || bytes > MAX_BLOB) {
        GP_LOG(GP_LOG_DEBUG, "cache: %" PRIu64 "-byte document over the budget, not stored", bytes);
        return GP_OK;
    }
    char key[160], version[17], kt[48];
    doc_key(graph_hash, kind, h.list_hash, key, sizeof key);
    snprintf(version, sizeof version, "%016" PRIx64, graph_hash);
    snprintf(kt, sizeof kt, "doc-%.40s", kind);
    row r = {key, graph, version, kt, h.rows, h.cols};
    return store_row(c, &r, &h, s, err);
}

/* Reads and verifies a document row (1 hit, 0 mismatch with *bad set, -SQLite code on error). */
static int read_doc(gp_cache *c, sqlite3_int64 rowid, uint64_t graph_hash, uint64_t rh,
                    const char *req, char **data, size_t *len, int *bad) {
    sqlite3_blob *b = NULL;
    *bad = 0;
    int rc = sqlite3_blob_open(c->db, "main", "matrix_blob", "data", rowid, 0, &b);
    if (rc != SQLITE_OK) return -rc;
    size_t rl = strlen(req);
    uint64_t total = (uint64_t)sqlite3_blob_bytes(b);
    blob_hdr h;
    char *buf = NULL;
    int out = 0;
    if (total < sizeof h) {
        *bad = 1;
        goto done;
    }
    if ((rc = sqlite3_blob_read(b, &h, sizeof h, 0)) != SQLITE_OK) {
        out = -rc;
        goto done;
    }
    if (h.magic != CACHE_MAGIC || h.format != CACHE_FORMAT || h.kind != GP_CACHE_DOC ||
        h.graph_hash != graph_hash || h.list_hash != rh || h.elem != ELEM_BYTES || h.rows != rl ||
        h.payload != (uint64_t)h.rows + h.cols || total != sizeof h + h.payload) {
        *bad = 1;
        goto done;
    }
    if (!(buf = malloc(h.payload + 1))) goto done;
    if (h.payload && (rc = sqlite3_blob_read(b, buf, (int)h.payload, sizeof h)) != SQLITE_OK) {
        out = -rc;
        goto done;
    }
    uint64_t acc = CACHE_MAGIC;
    if (h.rows) acc = seg_checksum(acc, buf, h.rows);
    if (h.cols) acc = seg_checksum(acc, buf + h.rows, h.cols);
    if (acc != h.checksum || memcmp(buf, req, rl) != 0) {
        *bad = acc != h.checksum; /* another request with the same hash is a plain miss */
        goto done;
    }
    memmove(buf, buf + h.rows, h.cols);
    buf[h.cols] = 0;
    *data = buf;
    *len = h.cols;
    buf = NULL;
    out = 1;
done:
    free(buf);
    sqlite3_blob_close(b);
    return out;
}

int gp_cache_get_doc(gp_cache *c, uint64_t graph_hash, const char *kind, const char *req,
                     char **data, size_t *len) {
    if (!c || !kind || !req || !data || !len) return GP_ENOTFOUND;
    uint64_t rh = hash_bytes(req, strlen(req), 0x646f63ull);
    char key[160];
    doc_key(graph_hash, kind, rh, key, sizeof key);
    pthread_mutex_lock(&c->mu);
    int rc = SQLITE_OK, r = 0, bad = 0;
    sqlite3_int64 rowid = 0;
    retry_open(c);
    if (c->db && (rc = find_row(c, key, &rowid)) == SQLITE_OK && rowid)
        r = read_doc(c, rowid, graph_hash, rh, req, data, len, &bad);
    return get_end(c, key, rowid, r, bad, rc);
}

/* ---- admin ------------------------------------------------------------------------------------ */

static int purge_where(gp_cache *c, const char *sql, const char *a, const char *b,
                       uint64_t *deleted, gp_err *err) {
    if (deleted) *deleted = 0;
    if (!c) return GP_OK;
    pthread_mutex_lock(&c->mu);
    int rc = SQLITE_OK, status = GP_OK;
    if (!c->db) goto out;
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        if (a) sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
        if (b) sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) {
        if (deleted) *deleted = (uint64_t)sqlite3_changes(c->db);
        /* give the space back and keep the WAL small after a large purge */
        exec_sql(c->db, "PRAGMA incremental_vacuum");
        exec_sql(c->db, "PRAGMA wal_checkpoint(TRUNCATE)");
    }
out:
    if (rc != SQLITE_OK) {
        status = gp_err_set(err, GP_EDB, "cache purge: %s", sqlite3_errstr(rc));
        if (is_damage(rc)) recover(c);
    }
    pthread_mutex_unlock(&c->mu);
    return status;
}

int gp_cache_purge(gp_cache *c, const char *which, uint64_t *deleted, gp_err *err) {
    if (!which || !*which) return purge_where(c, "DELETE FROM matrix", NULL, NULL, deleted, err);
    return purge_where(c, "DELETE FROM matrix WHERE graph = ?1 OR version = lower(?1)", which, NULL,
                       deleted, err);
}

int gp_cache_purge_stale(gp_cache *c, const char *graph, uint64_t graph_hash, gp_err *err) {
    char version[17];
    snprintf(version, sizeof version, "%016" PRIx64, graph_hash);
    uint64_t n = 0;
    int rc = purge_where(c, "DELETE FROM matrix WHERE graph = ?1 AND version <> ?2",
                         graph ? graph : "", version, &n, err);
    if (rc == GP_OK && n)
        GP_LOG(GP_LOG_INFO, "cache: dropped %" PRIu64 " matrices of graph %s's old versions", n,
               graph ? graph : "");
    return rc;
}

void gp_cache_stats_get(gp_cache *c, gp_cache_stats *out) {
    memset(out, 0, sizeof *out);
    if (!c) {
        snprintf(out->error, sizeof out->error, "no cache configured");
        return;
    }
    pthread_mutex_lock(&c->mu);
    out->enabled = c->db != NULL;
    out->budget = c->budget;
    out->hits = c->hits;
    out->misses = c->misses;
    out->puts = c->puts;
    out->evictions = c->evictions;
    out->recoveries = c->recoveries;
    snprintf(out->path, sizeof out->path, "%s", c->path);
    snprintf(out->error, sizeof out->error, "%s", c->error);
    if (c->db) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(c->db, "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM matrix",
                                    -1, &st, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            out->entries = (uint64_t)sqlite3_column_int64(st, 0);
            out->bytes = (uint64_t)sqlite3_column_int64(st, 1);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(st);
        if (is_damage(rc)) recover(c);
    }
    pthread_mutex_unlock(&c->mu);
}
