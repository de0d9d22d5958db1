#!/usr/bin/env bash
# test_docs.sh - every shell example of README.md and docs/*.md run against the real binary and
# server (tests/doc_examples.py; its docstring lists the <!-- doctest: ... --> markers): an example
# that stops working fails the suite, and so does a broken link or a repository path that no longer
# exists (one check per file). Examples that need a GPU, Docker, a Kubernetes cluster or the
# data sets skip with the reason where those are missing. PostgreSQL examples run against a
# throwaway cluster (tests/pg_cluster.sh) holding the database they name: role and database `gis`
# with an osm2pgrouting-style `ways` table (a 5x5 street grid, nodes 1..25); the examples' host and
# port are pointed at it. Uses $BUILD/gpath. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/gpath" ]; then echo "skip: $BUILD/gpath not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
# shellcheck source=tests/pg_cluster.sh
. tests/pg_cluster.sh
pgtmp=$(mktemp -d)
chmod 755 "$pgtmp" # the cluster runs as the postgres user
pg_up=0
cleanup() { [ $pg_up -eq 1 ] && pgc_stop -m immediate; rm -rf "$pgtmp"; }
trap cleanup EXIT
if pgc_start "$pgtmp/pg"; then
  pg_up=1
  # osm2pgrouting's ways: gid, source, target, cost / reverse_cost (degrees of length) and
  # cost_s / reverse_cost_s (seconds), x1..y2; here a 5x5 grid, streets 100 m / 10 s apart
  if pgc_psql postgres -c "CREATE ROLE gis LOGIN" -c "CREATE DATABASE gis OWNER gis" &&
     pgc_psql gis -c "CREATE TABLE ways (gid bigint PRIMARY KEY, source bigint, target bigint,
         cost float8, reverse_cost float8, cost_s float8, reverse_cost_s float8, length_m float8,
         x1 float8, y1 float8, x2 float8, y2 float8, name text);
       ALTER TABLE ways OWNER TO gis;
       INSERT INTO ways
       SELECT row_number() OVER (), s, t, 0.0009, 0.0009, 10, 10, 100,
              8.5 + ((s - 1) % 5) * 0.0013, 47.3 + ((s - 1) / 5) * 0.0009,
              8.5 + ((t - 1) % 5) * 0.0013, 47.3 + ((t - 1) / 5) * 0.0009, 'street ' || s
       FROM (SELECT i AS s, i + 1 AS t FROM generate_series(1, 25) i WHERE i % 5 <> 0
             UNION ALL SELECT i, i + 5 FROM generate_series(1, 20) i) e;"; then
    export GPATH_DOCTEST_PG=1 GPATH_DOCTEST_PG_PORT=$PGC_PORT
  else
    echo "PostgreSQL examples: could not create the example database; they skip"
  fi
else
  echo "PostgreSQL examples: no cluster ($PGC_WHY); they skip"
fi
BUILD="$BUILD" timeout 600 /usr/bin/python3 tests/doc_examples.py
