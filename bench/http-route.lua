-- http-route.lua - wrk script for bench/cpu-http.sh: GET route between random node pairs of the
-- graph named by GPATH_BENCH_GRAPH with ids 1..GPATH_BENCH_NODES (the generator's ids), a fixed
-- seed per wrk thread so runs are comparable; prints one RESULT line for the bench script.
local n = tonumber(os.getenv("GPATH_BENCH_NODES") or "1000000")
local graph = os.getenv("GPATH_BENCH_GRAPH") or "road"
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(1000 + id)
  statuses = {}
end

function request()
  local s = math.random(1, n)
  local t = math.random(1, n)
  return wrk.format("GET", "/v1/graphs/" .. graph .. "/route?from=" .. s .. "&to=" .. t)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local by = {}
  for _, t in ipairs(threads) do
    for st, c in pairs(t:get("statuses")) do by[st] = (by[st] or 0) + c end
  end
  local parts = {}
  for st, c in pairs(by) do table.insert(parts, st .. ":" .. c) end
  table.sort(parts)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_s=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f " ..
    "max_ms=%.2f socket_errors=%d statuses=%s\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
    latency.max / 1e3, e.connect + e.read + e.write + e.timeout, table.concat(parts, ",")))
end
