-- 0001-cache.sql - gpath's SQLite matrix cache (storage/cache.c).
-- One row per cached distance matrix in `matrix` (the metadata, small, updated on every hit for the
-- LRU order) and its blob in `matrix_blob` (written once: an UPDATE of a row rewrites the whole
-- row, so the blob lives apart from last_used). The blob starts with a header (magic, format
-- version, graph version hash, shape, element type, payload checksum) that storage/cache.c checks
-- on every read; a mismatch is a miss. key = graph version + request kind + hash of
-- sources/targets + next-hop flag, so a changed graph version never finds an old matrix.
CREATE TABLE matrix (
    id         INTEGER PRIMARY KEY,
    key        TEXT NOT NULL UNIQUE,
    graph      TEXT NOT NULL,           -- the graph's served name (for DELETE ?graph=NAME)
    version    TEXT NOT NULL,           -- the graph's version (16 hex digits of its content hash)
    kind       TEXT NOT NULL,           -- 'table' or 'apsp'
    rows       INTEGER NOT NULL,
    cols       INTEGER NOT NULL,
    bytes      INTEGER NOT NULL,        -- length of the blob, for the size budget
    created_at INTEGER NOT NULL,        -- microseconds since the epoch
    last_used  INTEGER NOT NULL         -- microseconds since the epoch; LRU eviction order
);
CREATE INDEX matrix_last_used ON matrix (last_used);
CREATE INDEX matrix_graph ON matrix (graph);
CREATE INDEX matrix_version ON matrix (version);

CREATE TABLE matrix_blob (
    id   INTEGER PRIMARY KEY,           -- = matrix.id
    data BLOB NOT NULL
);

-- Deleting a matrix row (purge, eviction, replacement) deletes its blob.
CREATE TRIGGER matrix_delete AFTER DELETE ON matrix
BEGIN
    DELETE FROM matrix_blob WHERE id = old.id;
END;
