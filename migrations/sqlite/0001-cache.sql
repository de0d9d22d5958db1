-- 0001-cache.sql - gpath's SQLite matrix cache (storage/cache.c).
-- One row per cached distance matrix. The blob starts with a header (magic, format version,
-- graph version hash, shape, element type, payload checksum) that storage/cache.c checks on every
-- read; a mismatch is a miss. key = graph version + request kind + hash of sources/targets +
-- next-hop flag, so a changed graph version never finds an old matrix.
CREATE TABLE matrix (
    key        TEXT PRIMARY KEY,
    graph      TEXT NOT NULL,           -- the graph's served name (for DELETE ?graph=NAME)
    version    TEXT NOT NULL,           -- the graph's version (16 hex digits of its content hash)
    kind       TEXT NOT NULL,           -- 'table' or 'apsp'
    rows       INTEGER NOT NULL,
    cols       INTEGER NOT NULL,
    bytes      INTEGER NOT NULL,        -- length of data, for the size budget
    created_at INTEGER NOT NULL,        -- microseconds since the epoch
    last_used  INTEGER NOT NULL,        -- microseconds since the epoch; LRU eviction order
    data       BLOB NOT NULL
);
CREATE INDEX matrix_last_used ON matrix (last_used);
CREATE INDEX matrix_graph ON matrix (graph);
CREATE INDEX matrix_version ON matrix (version);
