# shellcheck shell=bash disable=SC2154
# check_lib.sh - helpers for shell tests that run gpath commands and check their JSON (sourced;
# the caller sets BIN, PY, tmp and pass/fail/skip counters, and prints the closing line).
# ok NAME / bad NAME [DETAIL] / skipped NAME: count and print one result line.
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }

# check NAME PYTHON-EXPR CMD...: runs CMD, parses stdout as JSON into d, evaluates EXPR (true = pass)
check() {
  local name=$1 expr=$2; shift 2
  if ! "$@" >"$tmp/out" 2>"$tmp/err"; then bad "$name" "exit $? : $(head -c 300 "$tmp/err")"; return; fi
  if $PY -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($expr) else 1)" "$tmp/out" 2>"$tmp/pyerr"; then
    ok "$name"
  else
    bad "$name" "$(head -c 300 "$tmp/out") $(head -c 300 "$tmp/pyerr")"
  fi
}

# fails NAME PATTERN CMD...: CMD must exit 2 (a usage / input error) with PATTERN (grep -E) on stderr
fails() {
  local name=$1 pat=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name" "exit $rc, expected 2"; return; fi
  if grep -qE -- "$pat" "$tmp/err"; then ok "$name"; else bad "$name" "stderr: $(head -c 300 "$tmp/err")"; fi
}
