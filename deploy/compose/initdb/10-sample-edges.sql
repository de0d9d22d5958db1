-- 10-sample-edges.sql - run once by the postgres image on an empty data volume (compose.yaml).
-- A pgRouting edge table that gpath serves as the graph "roads" (?table=edges), seeded with a
-- small square with one diagonal (nodes 1..4), and a trigger that sends NOTIFY gpath_reload, 'roads'
-- on every committed change so that every gpath replica reloads it. Replace the rows with your
-- network (e.g. osm2pgrouting's ways: point gpath at it with ?table=ways).
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;

CREATE TABLE edges (
    id           BIGINT PRIMARY KEY,
    source       BIGINT NOT NULL,
    target       BIGINT NOT NULL,
    cost         DOUBLE PRECISION NOT NULL,
    reverse_cost DOUBLE PRECISION NOT NULL DEFAULT -1,
    x1 DOUBLE PRECISION, y1 DOUBLE PRECISION, x2 DOUBLE PRECISION, y2 DOUBLE PRECISION
);

INSERT INTO edges (id, source, target, cost, reverse_cost, x1, y1, x2, y2) VALUES
    (1, 1, 2, 100, 100, 13.400, 52.500, 13.401, 52.500),
    (2, 2, 3, 100, 100, 13.401, 52.500, 13.401, 52.501),
    (3, 3, 4, 100, 100, 13.401, 52.501, 13.400, 52.501),
    (4, 4, 1, 100, 100, 13.400, 52.501, 13.400, 52.500),
    (5, 1, 3, 150, 150, 13.400, 52.500, 13.401, 52.501);

CREATE FUNCTION edges_notify_gpath() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gpath_reload', 'roads');
    RETURN NULL;
END;
$$;

CREATE TRIGGER edges_notify_gpath
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON edges
    FOR EACH STATEMENT EXECUTE FUNCTION edges_notify_gpath();
