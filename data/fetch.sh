#!/usr/bin/env bash
# fetch.sh - `make data`: puts the public data sets the tests use into data/ (ignored by git), as
# listed in data/MANIFEST.tsv (path, size, sha256, URLs, transform).
#
# For each file: already in the destination with the right sha256 -> kept; else a local copy
# (GPATH_DATA, or ../shared/data when it exists) with the right sha256 -> copied, nothing fetched;
# else each URL in turn is downloaded (curl), transformed (gzip: gzip -9 -n) and verified. Before
# its first download from a host, a quick probe (5 s) checks that the host answers at all: the URLs
# of a host that does not are skipped, and once two hosts fail and none answered the network is
# taken as unreachable and the rest is reported as with --no-download, so an offline run ends in
# seconds. A download that stalls (under 1 KB/s for 30 s) is given up. Ends with what it could not
# get, per file and per group (missing groups make their tests skip), and exits 1 if anything is
# missing.
#
# usage: data/fetch.sh [--manifest FILE] [--dest DIR] [--source DIR] [--no-download]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
manifest=data/MANIFEST.tsv dest=data download=1
src=${GPATH_DATA:-}
if [ -z "$src" ] && [ -d ../shared/data ]; then src=$(cd ../shared/data && pwd); fi
while [ $# -gt 0 ]; do
  case "$1" in
    --manifest) manifest=$2; shift 2 ;;
    --dest) dest=$2; shift 2 ;;
    --source) src=$2; shift 2 ;;
    --no-download) download=0; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -r "$manifest" ] || { echo "fetch.sh: cannot read $manifest" >&2; exit 2; }
# a source inside the destination would copy files onto themselves
if [ -n "$src" ] && [ -d "$src" ] && [ "$(cd "$src" && pwd -P)" = "$(mkdir -p "$dest" && cd "$dest" && pwd -P)" ]; then src=; fi

sha_ok() { # FILE "SHA|SHA..."
  local got; got=$(sha256sum "$1" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$got" ] && [[ "|$2|" == *"|$got|"* ]]
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
declare -A host_state # host -> "up" or why it is not
hosts_up=0 hosts_down=0 offline=
reachable() { # URL: 0 when its host answers (any HTTP answer), else 1 with $why_host set
  local h=${1#*://}; h=${h%%/*}
  if [ -z "${host_state[$h]:-}" ]; then
    if [ -n "$offline" ]; then
      host_state[$h]="not tried (no network)"
    elif curl -sS -o /dev/null --connect-timeout 5 --max-time 5 -r 0-0 "$1" 2>"$tmp/probe"; then
      host_state[$h]=up; hosts_up=$((hosts_up + 1))
    else
      host_state[$h]="$h unreachable ($(tr '\n' ' ' <"$tmp/probe" | sed 's/^curl: //;s/ *$//'))"
      hosts_down=$((hosts_down + 1))
      if [ $hosts_up -eq 0 ] && [ $hosts_down -ge 2 ]; then
        offline="no network: ${host_state[$h]} and $hosts_down hosts in all, none answered; downloads skipped"
        echo "data: $offline" >&2
      fi
    fi
  fi
  why_host=${host_state[$h]}
  [ "$why_host" = up ]
}
kept=0 copied=0 fetched=0 missing=()
declare -A group_missing
while IFS=$'\t' read -r path size sha urls transform; do
  case "$path" in ''|'#'*) continue ;; esac
  out="$dest/$path"
  if [ -f "$out" ] && sha_ok "$out" "$sha"; then kept=$((kept + 1)); continue; fi
  mkdir -p "$(dirname "$out")"
  if [ -n "$src" ] && [ -f "$src/$path" ] && sha_ok "$src/$path" "$sha"; then
    cp "$src/$path" "$out.part" && mv "$out.part" "$out" && { copied=$((copied + 1)); continue; }
  fi
  why="no local copy${src:+ in $src}"
  got=0
  if [ "$urls" = "-" ]; then
    why="$why; no public source (made for this project: get it from a gpath data copy, GPATH_DATA)"
  elif [ $download -eq 0 ]; then
    why="$why; downloads disabled"
  else
    for u in $urls; do
      rm -f "$tmp/dl"
      if ! reachable "$u"; then why="$why; $u: $why_host"; continue; fi
      if ! curl -fsSL --retry 2 --connect-timeout 15 --speed-limit 1000 --speed-time 30 \
        -o "$tmp/dl" "$u" 2>"$tmp/err"; then
        why="$why; $u: $(tr '\n' ' ' <"$tmp/err" | sed 's/^curl: //')"; continue
      fi
      if [ "$transform" = gzip ]; then gzip -9 -n -c "$tmp/dl" >"$tmp/dl.gz" && mv "$tmp/dl.gz" "$tmp/dl"; fi
      if ! sha_ok "$tmp/dl" "$sha"; then
        why="$why; $u: sha256 $(sha256sum "$tmp/dl" | cut -c1-16)... is not the manifest's (size $(stat -c %s "$tmp/dl"), expected $size)"
        continue
      fi
      mv "$tmp/dl" "$out" && got=1 && fetched=$((fetched + 1)) && echo "fetched $path from $u" && break
    done
  fi
  if [ $got -eq 0 ]; then
    missing+=("$path: $why")
    group_missing[${path%%/*}]=$(( ${group_missing[${path%%/*}]:-0} + 1 ))
  fi
done <"$manifest"
echo "data: $kept already in $dest, $copied copied from ${src:-(no local copy)}, $fetched downloaded, ${#missing[@]} missing"
if [ ${#missing[@]} -gt 0 ]; then
  echo "could not get:"
  for m in "${missing[@]}"; do echo "  $m"; done
  for g in "${!group_missing[@]}"; do
    echo "group $g: ${group_missing[$g]} file(s) missing; tests that need them skip"
  done
  exit 1
fi
exit 0
