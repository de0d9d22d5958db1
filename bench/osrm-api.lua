-- wrk script for OSRM v1 requests against gpath or osrm-routed (bench/osrm-api.sh):
--   OSRM_MODE=route: GET {OSRM_PATH}/route/v1/driving/A;B?overview=false, A and B random in OSRM_BBOX
--   OSRM_MODE=table: GET {OSRM_PATH}/table/v1/driving/P1;...;Pk (k = OSRM_TABLE_N, k x k durations)
-- OSRM_BBOX = "minlon,minlat,maxlon,maxlat"; fixed seed per thread, so gpath and OSRM get the same
-- request sequence. Connection: close unless OSRM_KEEPALIVE is set (see ../shared/peers/osrm:
-- osrm-routed with keep-alive stalls ~40 ms per request on delayed ACKs). Prints one RESULT line.
local bb = {}
for v in string.gmatch(os.getenv("OSRM_BBOX") or "9.47,47.05,9.63,47.27", "[^,]+") do table.insert(bb, tonumber(v)) end
local mode = os.getenv("OSRM_MODE") or "route"
local k = tonumber(os.getenv("OSRM_TABLE_N") or "10")
local profile = os.getenv("OSRM_PROFILE") or "driving"
local threads, counter = {}, 0
function setup(thread) counter = counter + 1; thread:set("id", counter); table.insert(threads, thread) end
function init(args) math.randomseed(1000 + id); statuses = {} end
local function pt() return string.format("%.6f,%.6f", bb[1] + math.random() * (bb[3] - bb[1]), bb[2] + math.random() * (bb[4] - bb[2])) end
local hdr = os.getenv("OSRM_KEEPALIVE") and {} or {["Connection"] = "close"}
function request()
  if mode == "table" then
    local p = {}
    for i = 1, k do p[i] = pt() end
    return wrk.format("GET", "/table/v1/" .. profile .. "/" .. table.concat(p, ";"), hdr)
  end
  return wrk.format("GET", "/route/v1/" .. profile .. "/" .. pt() .. ";" .. pt() .. "?overview=false", hdr)
end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local by = {}
  for _, t in ipairs(threads) do for st, c in pairs(t:get("statuses")) do by[st] = (by[st] or 0) + c end end
  local parts = {}
  for st, c in pairs(by) do table.insert(parts, st .. ":" .. c) end
  table.sort(parts)
  local e = summary.errors
  io.write(string.format("RESULT requests=%d rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f socket_errors=%d statuses=%s\n",
    summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1e3,
    latency:percentile(90) / 1e3, latency:percentile(99) / 1e3, e.connect + e.read + e.write + e.timeout, table.concat(parts, ",")))
end
