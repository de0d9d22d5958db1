-- 0001-gpath-schema.sql - gpath's own PostgreSQL schema, for users without pgRouting tables.
-- gpath.edges has pgRouting's edge-table columns, so the same table serves pgRouting functions
-- and gpath: a cost < 0 means the source->target direction does not exist, a reverse_cost < 0
-- that the target->source direction does not exist. x1,y1 / x2,y2 are the coordinates of source
-- and target (longitude, latitude) and may be NULL.
-- gpath.notify_reload() is a trigger function that sends NOTIFY gpath_reload with the trigger's
-- first argument as payload (a graph name; none = every PostgreSQL graph); it is attached to
-- gpath.edges so a committed change makes a running `gpath serve` reload (NOTIFYs of one
-- transaction are delivered once, at commit).
CREATE SCHEMA IF NOT EXISTS gpath;

CREATE TABLE gpath.edges (
    id           BIGINT PRIMARY KEY,
    source       BIGINT NOT NULL,
    target       BIGINT NOT NULL,
    cost         DOUBLE PRECISION NOT NULL,
    reverse_cost DOUBLE PRECISION NOT NULL DEFAULT -1,
    x1           DOUBLE PRECISION,
    y1           DOUBLE PRECISION,
    x2           DOUBLE PRECISION,
    y2           DOUBLE PRECISION
);
CREATE INDEX edges_source ON gpath.edges (source);
CREATE INDEX edges_target ON gpath.edges (target);

CREATE FUNCTION gpath.notify_reload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gpath_reload', COALESCE(TG_ARGV[0], ''));
    RETURN NULL;
END;
$$;

CREATE TRIGGER edges_notify_reload
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON gpath.edges
    FOR EACH STATEMENT EXECUTE FUNCTION gpath.notify_reload();
