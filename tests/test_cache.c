/* test_cache.c - the SQLite matrix cache (storage/cache.c) against real SQLite files in a temp dir:
 * round trips, header/checksum/shape/version mismatches are misses, LRU eviction under the budget,
 * purge, damaged files moved aside and rebuilt, a newer schema refused, concurrent threads, and a
 * writer process killed with SIGKILL in the middle of its writes (every committed entry intact,
 * nothing torn served), and no -shm file (the file held exclusively; a second holder is disabled). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "storage/cache.h"
#include "storage/migrate.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];
static char path[300];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "%s/gpath-cache-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(path, sizeof path, "%s/cache.db", dir);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
    return 0;
}

/* Deterministic matrix contents for (seed, i, j); some cells unreachable. */
static uint64_t cell(uint64_t seed, uint32_t i, uint32_t j) {
    uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)i << 32 | j);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (x % 97 == 0) ? UINT64_MAX : x >> 20;
}

static void fill(uint64_t seed, uint32_t ns, uint32_t nt, uint64_t *d, uint32_t *next) {
    for (uint32_t i = 0; i < ns; i++)
        for (uint32_t j = 0; j < nt; j++) {
            d[(size_t)i * nt + j] = cell(seed, i, j);
            if (next) next[(size_t)i * nt + j] = (uint32_t)(cell(seed + 1, i, j) % nt);
        }
}

static gp_cache_key table_key(uint64_t ghash, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                              uint32_t nt) {
    gp_cache_key k = {.graph = "g",
                      .graph_hash = ghash,
                      .kind = GP_CACHE_TABLE,
                      .src = src,
                      .ns = ns,
                      .dst = dst,
                      .nt = nt};
    return k;
}

static void test_round_trip(void **state) {
    (void)state;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    uint32_t src[3] = {5, 1, 9}, dst[4] = {0, 2, 4, 6};
    uint64_t d[12], got[12];
    fill(7, 3, 4, d, NULL);
    gp_cache_key k = table_key(0xabcdefull, src, 3, dst, 4);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_ENOTFOUND);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    memset(got, 0, sizeof got);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    assert_memory_equal(got, d, sizeof d);

    /* apsp with next hops, a distinct key from the same graph */
    enum { N = 50 };
    uint64_t *ad = malloc(N * N * 8), *ag = malloc(N * N * 8);
    uint32_t *an = malloc(N * N * 4), *agn = malloc(N * N * 4);
    fill(11, N, N, ad, an);
    gp_cache_key a = {.graph = "g",
                      .graph_hash = 0xabcdefull,
                      .kind = GP_CACHE_APSP,
                      .ns = N,
                      .nt = N,
                      .next_hops = 1};
    assert_int_equal(gp_cache_put(c, &a, ad, an, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &a, ag, agn), GP_OK);
    assert_memory_equal(ag, ad, N * N * 8);
    assert_memory_equal(agn, an, N * N * 4);
    /* the same apsp without next hops is another entry */
    a.next_hops = 0;
    assert_int_equal(gp_cache_get(c, &a, ag, NULL), GP_ENOTFOUND);

    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_true(st.enabled);
    assert_int_equal(st.entries, 2);
    assert_true(st.bytes > N * N * 12);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.misses, 2);
    gp_cache_close(c);

    /* persists across reopen */
    c = gp_cache_open(path, 0, &err);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    assert_memory_equal(got, d, sizeof d);
    gp_cache_close(c);
    free(ad);
    free(ag);
    free(an);
    free(agn);
}

static void test_mismatch_is_miss(void **state) {
    (void)state;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 0, &err);
    uint32_t src[2] = {1, 2}, dst[2] = {3, 4}, dst2[2] = {3, 5};
    uint64_t d[4], got[4];
    fill(3, 2, 2, d, NULL);
    gp_cache_key k = table_key(42, src, 2, dst, 2);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    /* a changed graph version never finds the old matrix */
    gp_cache_key v = table_key(43, src, 2, dst, 2);
    assert_int_equal(gp_cache_get(c, &v, got, NULL), GP_ENOTFOUND);
    /* other targets, other shape */
    gp_cache_key t = table_key(42, src, 2, dst2, 2);
    assert_int_equal(gp_cache_get(c, &t, got, NULL), GP_ENOTFOUND);
    gp_cache_key s = table_key(42, src, 1, dst, 2);
    assert_int_equal(gp_cache_get(c, &s, got, NULL), GP_ENOTFOUND);
    /* purge_stale drops version 42 when the graph is now 43 */
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    assert_int_equal(gp_cache_purge_stale(c, "g", 43, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_ENOTFOUND);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    gp_cache_close(c);

    /* damage the stored header (magic) and then one payload byte behind the cache's back */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE matrix_blob SET data = X'00' || substr(data, 2)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    c = gp_cache_open(path, 0, &err);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_ENOTFOUND);
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 0); /* the bad row was deleted */
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    gp_cache_close(c);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    /* flip the last byte of the distances: header intact, checksum wrong */
    assert_int_equal(
        sqlite3_exec(db,
                     "UPDATE matrix_blob SET data = substr(data, 1, length(data) - 1) || "
                     "CASE WHEN substr(data, -1) = X'01' THEN X'02' ELSE X'01' END",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    c = gp_cache_open(path, 0, &err);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_ENOTFOUND);
    gp_cache_close(c);
}

static void test_lru_eviction(void **state) {
    (void)state;
    gp_err err;
    enum { NS = 10, NT = 100 }; /* 8000-byte matrices + header + lists */
    uint32_t src[NS], dst[NT];
    for (uint32_t i = 0; i < NS; i++) src[i] = i;
    for (uint32_t j = 0; j < NT; j++) dst[j] = j;
    uint64_t d[NS * NT], got[NS * NT];
    gp_cache *c = gp_cache_open(path, 3 * 8600, &err); /* room for three */
    gp_cache_key k[5];
    for (int i = 0; i < 5; i++) k[i] = table_key(100 + (uint64_t)i, src, NS, dst, NT);
    for (int i = 0; i < 3; i++) {
        fill((uint64_t)i, NS, NT, d, NULL);
        assert_int_equal(gp_cache_put(c, &k[i], d, NULL, &err), GP_OK);
        usleep(2000);
    }
    /* touch 0: now 1 is the least recently used */
    assert_int_equal(gp_cache_get(c, &k[0], got, NULL), GP_OK);
    usleep(2000);
    fill(3, NS, NT, d, NULL);
    assert_int_equal(gp_cache_put(c, &k[3], d, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k[1], got, NULL), GP_ENOTFOUND);
    assert_int_equal(gp_cache_get(c, &k[0], got, NULL), GP_OK);
    assert_int_equal(gp_cache_get(c, &k[2], got, NULL), GP_OK);
    assert_int_equal(gp_cache_get(c, &k[3], got, NULL), GP_OK);
    assert_memory_equal(got, d, sizeof d);
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 3);
    assert_true(st.bytes <= st.budget);
    assert_int_equal(st.evictions, 1);
    /* a matrix larger than the whole budget is not stored, and evicts nothing */
    uint64_t *big = calloc(NS * NT * 4, 8);
    uint32_t bdst[NT * 4];
    for (uint32_t j = 0; j < NT * 4; j++) bdst[j] = j;
    gp_cache_key bk = table_key(7, src, NS, bdst, NT * 4);
    assert_int_equal(gp_cache_put(c, &bk, big, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &bk, big, NULL), GP_ENOTFOUND);
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 3);
    free(big);
    /* purge by version (16 hex digits), by graph name, all */
    uint64_t n = 0;
    assert_int_equal(gp_cache_purge(c, "0000000000000066", &n, &err), GP_OK); /* 102 */
    assert_int_equal(n, 1);
    assert_int_equal(gp_cache_get(c, &k[2], got, NULL), GP_ENOTFOUND);
    k[4].graph = "other";
    assert_int_equal(gp_cache_put(c, &k[4], d, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_purge(c, "g", &n, &err), GP_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gp_cache_get(c, &k[4], got, NULL), GP_OK);
    assert_int_equal(gp_cache_purge(c, NULL, &n, &err), GP_OK);
    assert_int_equal(n, 1);
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 0);
    gp_cache_close(c);
    /* evictions, replacements and purges took the blobs with them */
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM matrix_blob", -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
}

static int count_corrupt(void) {
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, "cache.db.corrupt-") && !strstr(e->d_name, "-wal") &&
            !strstr(e->d_name, "-shm"))
            n++;
    if (d) closedir(d);
    return n;
}

/* Documents (a job's result): kept under graph version + kind + the request's text, read back
 * after a reopen, another request / version / kind a miss, a damaged blob a miss that deletes the
 * row, the shared budget's LRU eviction, purges by graph name. */
static void test_documents(void **state) {
    (void)state;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 3 * 1200, &err); /* room for three 1000-byte documents */
    assert_non_null(c);
    char doc[1000], *got = NULL;
    size_t len = 0;
    memset(doc, 'a', sizeof doc);
    memcpy(doc, "{\"x\":1}\0csv", 12);
    const char *req = "failure-analysis/1 version=1 rest={}";
    assert_int_equal(gp_cache_get_doc(c, 7, "fa", req, &got, &len), GP_ENOTFOUND);
    assert_int_equal(gp_cache_put_doc(c, "g", 7, "fa", req, doc, sizeof doc, &err), GP_OK);
    gp_cache_close(c);
    c = gp_cache_open(path, 3 * 1200, &err);
    assert_int_equal(gp_cache_get_doc(c, 7, "fa", req, &got, &len), GP_OK);
    assert_int_equal(len, sizeof doc);
    assert_memory_equal(got, doc, sizeof doc);
    assert_int_equal(got[len], 0);
    free(got);
    got = NULL;
    assert_int_equal(gp_cache_get_doc(c, 8, "fa", req, &got, &len), GP_ENOTFOUND);
    assert_int_equal(gp_cache_get_doc(c, 7, "repair", req, &got, &len), GP_ENOTFOUND);
    assert_int_equal(gp_cache_get_doc(c, 7, "fa", "failure-analysis/1 version=2", &got, &len),
                     GP_ENOTFOUND);
    /* a matrix key of the same version does not see it */
    uint32_t src[1] = {0}, dst[1] = {0};
    uint64_t d[1];
    gp_cache_key k = table_key(7, src, 1, dst, 1);
    assert_int_equal(gp_cache_get(c, &k, d, NULL), GP_ENOTFOUND);
    /* three more: the first (least recently used) is evicted */
    char r2[64];
    for (int i = 0; i < 3; i++) {
        snprintf(r2, sizeof r2, "req %d", i);
        assert_int_equal(gp_cache_put_doc(c, "h", 7, "fa", r2, doc, sizeof doc, &err), GP_OK);
        usleep(2000);
    }
    assert_int_equal(gp_cache_get_doc(c, 7, "fa", req, &got, &len), GP_ENOTFOUND);
    assert_int_equal(gp_cache_get_doc(c, 7, "fa", "req 2", &got, &len), GP_OK);
    free(got);
    got = NULL;
    /* a damaged blob: a miss, and the row is gone */
    gp_cache_close(c);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE matrix_blob SET data = substr(data, 1, 100) || "
                                  "zeroblob(length(data) - 100) WHERE id = (SELECT id FROM matrix "
                                  "WHERE kind = 'doc-fa' ORDER BY last_used DESC LIMIT 1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    c = gp_cache_open(path, 3 * 1200, &err);
    assert_int_equal(gp_cache_get_doc(c, 7, "fa", "req 2", &got, &len), GP_ENOTFOUND);
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 2);
    uint64_t n = 0;
    assert_int_equal(gp_cache_purge(c, "h", &n, &err), GP_OK);
    assert_int_equal(n, 2);
    gp_cache_close(c);
}

static void test_corrupt_file_moved_aside(void **state) {
    (void)state;
    gp_err err;
    /* not a database at all */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < 4096; i++) fputc((i * 7) & 0xff, f);
    fclose(f);
    gp_cache *c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_true(st.enabled);
    assert_int_equal(st.recoveries, 1);
    assert_int_equal(count_corrupt(), 1);
    /* works after the rebuild */
    uint32_t src[1] = {0}, dst[1] = {1};
    uint64_t d[1] = {17}, got[1];
    gp_cache_key k = table_key(1, src, 1, dst, 1);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    assert_int_equal(got[0], 17);
    /* fill some pages, then smash the middle of the file (a real database with damaged pages) */
    enum { NS = 20, NT = 200 };
    uint32_t s2[NS], t2[NT];
    for (uint32_t i = 0; i < NS; i++) s2[i] = i;
    for (uint32_t j = 0; j < NT; j++) t2[j] = j;
    uint64_t *m = malloc(NS * NT * 8);
    for (int e = 0; e < 8; e++) {
        fill((uint64_t)e, NS, NT, m, NULL);
        gp_cache_key kk = table_key(200 + (uint64_t)e, s2, NS, t2, NT);
        assert_int_equal(gp_cache_put(c, &kk, m, NULL, &err), GP_OK);
    }
    gp_cache_close(c);
    f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    assert_true(size > 40000);
    for (long off = 4096; off < size; off += 4096) { /* every page but the first: b-tree garbage */
        fseek(f, off, SEEK_SET);
        for (int i = 0; i < 64; i++) fputc(0xa5, f);
    }
    fclose(f);
    c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    gp_cache_stats_get(c, &st);
    assert_true(st.enabled);
    assert_int_equal(count_corrupt(), 2);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_ENOTFOUND);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    gp_cache_close(c);
    free(m);
}

/* The file truncated under an open cache (an operator's mistake, a full disk's cleanup): every
 * call keeps answering (a miss, then a new cache), never SIGBUS. With the cache's former 256 MiB
 * mmap the read of a mapped page past the new end of file killed the process. */
static void test_truncated_under_open_cache(void **state) {
    (void)state;
    gp_err err;
    enum { NS = 20, NT = 300 };
    uint32_t s2[NS], t2[NT];
    for (uint32_t i = 0; i < NS; i++) s2[i] = i;
    for (uint32_t j = 0; j < NT; j++) t2[j] = j;
    uint64_t *m = malloc(NS * NT * 8), *got = malloc(NS * NT * 8);
    assert_non_null(m);
    assert_non_null(got);
    gp_cache *c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    for (int e = 0; e < 8; e++) {
        fill((uint64_t)e, NS, NT, m, NULL);
        gp_cache_key kk = table_key(300 + (uint64_t)e, s2, NS, t2, NT);
        assert_int_equal(gp_cache_put(c, &kk, m, NULL, &err), GP_OK);
    }
    gp_cache_close(c); /* checkpoint: the rows now live in the main file */
    c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    gp_cache_key k0 = table_key(300, s2, NS, t2, NT);
    assert_int_equal(gp_cache_get(c, &k0, got, NULL), GP_OK); /* pages read (and mapped, before) */
    assert_int_equal(truncate(path, 8192), 0);
    for (int e = 0; e < 8; e++) { /* every read: a miss or a verified hit, never a crash */
        gp_cache_key kk = table_key(300 + (uint64_t)e, s2, NS, t2, NT);
        int rc = gp_cache_get(c, &kk, got, NULL);
        assert_true(rc == GP_OK || rc == GP_ENOTFOUND);
        if (rc == GP_OK) {
            fill((uint64_t)e, NS, NT, m, NULL);
            assert_memory_equal(got, m, NS * NT * 8);
        }
    }
    /* still a working cache afterwards (the damaged file moved aside, a new one in its place) */
    fill(99, NS, NT, m, NULL);
    gp_cache_key k9 = table_key(399, s2, NS, t2, NT);
    assert_int_equal(gp_cache_put(c, &k9, m, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k9, got, NULL), GP_OK);
    assert_memory_equal(got, m, NS * NT * 8);
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_true(st.enabled);
    gp_cache_close(c);
    /* reopened: the damage is found (quick_check) and the file moved aside, or it reads whole */
    c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    gp_cache_stats_get(c, &st);
    assert_true(st.enabled);
    assert_true(st.recoveries == 1 || count_corrupt() == 0);
    int rc = gp_cache_get(c, &k0, got, NULL);
    assert_true(rc == GP_OK || rc == GP_ENOTFOUND);
    gp_cache_close(c);
    free(m);
    free(got);
}

static void test_newer_schema_refused(void **state) {
    (void)state;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    gp_cache_close(c);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO schema_version (version, name) VALUES (9999, "
                                  "'9999-future')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    gp_err_clear(&err);
    c = gp_cache_open(path, 0, &err);
    assert_null(c);
    assert_int_equal(err.code, GP_EDB);
    assert_non_null(strstr(err.msg, "9999"));
    assert_non_null(strstr(err.msg, "newer"));
    assert_int_equal(count_corrupt(), 0); /* refused, not treated as damage */
    assert_true(gp_migration_latest("sqlite") >= 1);
    assert_true(gp_migration_latest("postgres") >= 1);
}

static void test_unopenable_cache_is_disabled(void **state) {
    (void)state;
    char bad[400];
    snprintf(bad, sizeof bad, "%s/no/such/dir/cache.db", dir);
    gp_err err;
    gp_cache *c = gp_cache_open(bad, 0, &err);
    assert_non_null(c); /* the service keeps answering, without a cache */
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_false(st.enabled);
    assert_true(strlen(st.error) > 0);
    uint32_t src[1] = {0};
    uint64_t d[1] = {3};
    gp_cache_key k = table_key(1, src, 1, src, 1);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k, d, NULL), GP_ENOTFOUND);
    gp_cache_close(c);
    /* and no cache at all is a miss too */
    assert_int_equal(gp_cache_get(NULL, &k, d, NULL), GP_ENOTFOUND);
    gp_cache_close(NULL);
}

typedef struct worker {
    gp_cache *c;
    int id;
    int failures;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    enum { NS = 8, NT = 64 };
    uint32_t src[NS], dst[NT];
    uint64_t d[NS * NT], got[NS * NT];
    gp_err err;
    for (int it = 0; it < 40; it++) {
        int key = (w->id * 7 + it) % 12; /* keys shared between threads */
        for (uint32_t i = 0; i < NS; i++) src[i] = (uint32_t)(i + (uint32_t)key);
        for (uint32_t j = 0; j < NT; j++) dst[j] = j * 3;
        gp_cache_key k = table_key(999, src, NS, dst, NT);
        fill((uint64_t)key, NS, NT, d, NULL);
        int rc = gp_cache_get(w->c, &k, got, NULL);
        if (rc == GP_OK && memcmp(got, d, sizeof d) != 0) w->failures++;
        if (rc != GP_OK && gp_cache_put(w->c, &k, d, NULL, &err) != GP_OK) w->failures++;
    }
    return NULL;
}

static void test_concurrent_threads(void **state) {
    (void)state;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 0, &err);
    enum { T = 8 };
    pthread_t th[T];
    worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (worker){c, i, 0};
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 12);
    assert_int_equal(st.hits + st.misses, T * 40);
    assert_true(st.hits > 0);
    gp_cache_close(c);
}

/* A writer process stores entries 0,1,2,... (each ~160 KB) and reports each index on a pipe after its
 * put returned; the parent kills it with SIGKILL mid-stream and checks every reported entry. */
static void test_kill9_during_writes(void **state) {
    (void)state;
    enum { NS = 20, NT = 1000 };
    static uint32_t src[NS], dst[NT];
    for (uint32_t i = 0; i < NS; i++) src[i] = i;
    for (uint32_t j = 0; j < NT; j++) dst[j] = j;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        gp_err err;
        gp_cache *c = gp_cache_open(path, 0, &err);
        if (!c) _exit(2);
        uint64_t *d = malloc(NS * NT * 8);
        for (uint32_t e = 0;; e++) {
            fill(e, NS, NT, d, NULL);
            gp_cache_key k = table_key(5000 + e, src, NS, dst, NT);
            if (gp_cache_put(c, &k, d, NULL, &err) != GP_OK) _exit(3);
            if (write(fd[1], &e, sizeof e) != sizeof e) _exit(4);
        }
    }
    close(fd[1]);
    uint32_t e, last = 0, count = 0;
    while (count < 60 && read(fd[0], &e, sizeof e) == sizeof e) {
        last = e;
        count++;
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    /* drain the indices reported before the kill landed */
    while (read(fd[0], &e, sizeof e) == sizeof e) last = e;
    close(fd[0]);
    gp_err err;
    gp_cache *c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    gp_cache_stats st;
    gp_cache_stats_get(c, &st);
    assert_int_equal(st.recoveries, 0); /* a killed writer leaves a valid database */
    uint64_t *d = malloc(NS * NT * 8), *got = malloc(NS * NT * 8);
    /* every committed entry is intact; at most the one in flight (last + 1) may exist too, and then
     * whole, never torn */
    for (uint32_t i = 0; i <= last + 1; i++) {
        fill(i, NS, NT, d, NULL);
        gp_cache_key k = table_key(5000 + i, src, NS, dst, NT);
        int rc = gp_cache_get(c, &k, got, NULL);
        if (i <= last) assert_int_equal(rc, GP_OK);
        if (rc == GP_OK) assert_memory_equal(got, d, (size_t)NS * NT * 8);
    }
    gp_cache_stats_get(c, &st);
    assert_true(st.entries == last + 1 || st.entries == last + 2);
    gp_cache_close(c);
    free(d);
    free(got);
}

/* The file is held exclusively, so WAL mode keeps its index in process memory: no -shm file exists
 * to be mapped (and truncated under the server: SIGBUS). A second holder of the same file gets a
 * disabled cache at once (every get a miss), while the first keeps answering. */
static void test_exclusive_no_shm(void **state) {
    (void)state;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 0, &err);
    assert_non_null(c);
    uint32_t src[2] = {1, 2}, dst[2] = {3, 4};
    uint64_t d[4], got[4];
    fill(3, 2, 2, d, NULL);
    gp_cache_key k = table_key(0x77ull, src, 2, dst, 2);
    assert_int_equal(gp_cache_put(c, &k, d, NULL, &err), GP_OK);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    char shm[320];
    snprintf(shm, sizeof shm, "%s-shm", path);
    assert_int_not_equal(access(shm, F_OK), 0);

    gp_cache *other = gp_cache_open(path, 0, &err);
    assert_non_null(other);
    gp_cache_stats st;
    gp_cache_stats_get(other, &st);
    assert_false(st.enabled);
    assert_non_null(strstr(st.error, "locked"));
    assert_int_equal(st.recoveries, 0); /* a locked file is not damage: nothing moved aside */
    assert_int_equal(gp_cache_get(other, &k, got, NULL), GP_ENOTFOUND);
    assert_int_equal(gp_cache_get(c, &k, got, NULL), GP_OK);
    assert_memory_equal(got, d, sizeof d);
    gp_cache_close(other);
    gp_cache_close(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mismatch_is_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lru_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_documents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_file_moved_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_under_open_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unopenable_cache_is_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill9_during_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclusive_no_shm, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
