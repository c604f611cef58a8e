#!/usr/bin/env bash
# Clone, fetch and push of a ~100 MB repository: the real gateway (spb-gateway.jar) against C git serving the
# very same repository directory, measured alternately in one run. Prints a table of medians and ratios.
#
# usage: benchmarks/git-transport.sh [--runs N] [--commits N] [--ops "clone push fetch"] [--jfr FILE] [--keep]
#   --runs N     timed runs of each operation against each server (default 5; the median is reported)
#   --commits N  commits in the generated repository (default 200, about 100 MB packed)
#   --ops LIST   the operations to measure (default: clone push fetch)
#   --jfr FILE   record the gateway with Java Flight Recorder (profile settings) into FILE
#   --keep       leave the work directory (repositories, logs) in place
# SPB_GATEWAY_JAVA_OPTS adds JVM options to the gateway (for experiments); SPB_GATEWAY_JAR names another jar.
#
# The baseline is `git http-backend` behind lighttpd when lighttpd is installed (push authenticated with Basic,
# as the gateway's is), otherwise `git daemon`. Needs: java 17, git, openssl, and gateway-verticle/target/
# spb-gateway.jar (mvn -B -o -q -pl gateway-verticle -am package -DskipTests). nats-server is used when present.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=5
COMMITS=200
FETCH_COMMITS=20
BINARY_EVERY=5
BINARY_BYTES=$((1900 * 1024))
OPS="clone push fetch"
JFR=
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --commits) COMMITS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --jfr) JFR=$(realpath -m "$2"); shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
GATEWAY_JAR=${SPB_GATEWAY_JAR:-$ROOT/gateway-verticle/target/spb-gateway.jar}
[ -f "$GATEWAY_JAR" ] || { echo "$GATEWAY_JAR not found: mvn -B -o -q -pl gateway-verticle -am package -DskipTests" >&2; exit 2; }
for tool in java git openssl curl; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/spb-git-transport.XXXXXX")
PIDS=()
cleanup() {
  local pid
  # Only the processes this script started, by their ids, the gateway first so it can close its NATS link.
  for pid in "${PIDS[@]}"; do
    if kill "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [ "$KEEP" = 1 ]; then
    echo "work directory kept: $WORK" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
mkdir -p "$HOME"
git config --global user.name Bench
git config --global user.email bench@example.invalid
git config --global init.defaultBranch main

log() { printf '%s\n' "$*" >&2; }

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    if [ -z "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then
      echo "$port"
      return
    fi
  done
}

wait_http() {
  local url=$1 i
  for i in $(seq 100); do
    if curl -s -o /dev/null "$url"; then
      return 0
    fi
    sleep 0.1
  done
  log "nothing answers at $url"
  return 1
}

# ---------------------------------------------------------------------------------------------------------
# The repository: $COMMITS commits on main (tagged base), then $FETCH_COMMITS more for the fetch. Text files
# come from a fixed-seed generator in awk (Park-Miller, exact in awk's doubles, so any awk gives the same
# bytes); every ${BINARY_EVERY}th commit adds an incompressible blob (AES-CTR keystream from a fixed key), so
# the pack is really about 100 MB. Fixed dates make every object id the same on every run.
generate_repository() {
  local src=$1 total=$((COMMITS + FETCH_COMMITS)) k binaries
  binaries=$((total / BINARY_EVERY))
  git init -q --bare "$src"
  {
    for k in $(seq 1 "$binaries"); do
      printf 'blob\nmark :%d\ndata %d\n' "$k" "$BINARY_BYTES"
      head -c "$BINARY_BYTES" /dev/zero \
        | openssl enc -aes-256-ctr -nosalt -K "$(printf '%064x' "$k")" -iv 00000000000000000000000000000000
      printf '\n'
    done
    awk -v total="$total" -v base="$COMMITS" -v every="$BINARY_EVERY" '
      function rnd(n) { seed = (seed * 16807) % 2147483647; return seed % n }
      function line(   s, n, i) {
        s = indent[rnd(4)]; n = 3 + rnd(6)
        for (i = 0; i < n; i++) s = s word[rnd(nwords)] (rnd(4) == 0 ? rnd(100000) : "") sep[rnd(nseps)]
        return s "\n"
      }
      function text(bytes,   s) { s = ""; while (length(s) < bytes) s = s line(); return s }
      function emit(path, body) { printf "M 100644 inline %s\ndata %d\n%s\n", path, length(body), body }
      BEGIN {
        seed = 20260101
        nwords = split("value index count buffer result config request response stream token scope ref " \
          "commit tree blob pack object repository gateway runner job proposal review branch merge push " \
          "fetch clone verify sign key claim audit event queue worker thread future promise handler route " \
          "status error limit timeout retry cancel start stop open close read write flush sync lock map list " \
          "set entry node path name id size offset length", word, " ")
        nseps = split(" ;( ;) ;, ;. ;= ;+ ;-> ;{ ;} ", sep, ";")
        indent[0] = ""; indent[1] = "  "; indent[2] = "    "; indent[3] = "      "
        files = 0
        for (c = 1; c <= total; c++) {
          printf "commit refs/heads/main\nmark :%d\n", 100000 + c
          printf "author Bench <bench@example.invalid> %d +0000\n", 1767225600 + 600 * c
          printf "committer Bench <bench@example.invalid> %d +0000\n", 1767225600 + 600 * c
          msg = sprintf("change %d\n", c); printf "data %d\n%s", length(msg), msg
          if (c == 1) {
            for (; files < 1000; files++) { body[files] = text(8192); emit(sprintf("src/m%02d/f%04d.txt", files % 40, files), body[files]) }
          } else {
            for (i = 0; i < 20; i++) { f = rnd(files); body[f] = body[f] text(2048); emit(sprintf("src/m%02d/f%04d.txt", f % 40, f), body[f]) }
            for (i = 0; i < 5; i++) { body[files] = text(8192); emit(sprintf("src/m%02d/f%04d.txt", files % 40, files), body[files]); files++ }
          }
          if (c % every == 0) printf "M 100644 :%d assets/blob-%04d.bin\n", c / every, c / every
          printf "\n"
          if (c == base) printf "reset refs/tags/base\nfrom :%d\n\n", 100000 + c
        }
      }'
  } | git -C "$src" fast-import --quiet
  git -C "$src" repack -q -adb --write-bitmap-index
}

# ---------------------------------------------------------------------------------------------------------
# Servers.
start_gateway() {
  local nats_url=nats://127.0.0.1:1 port java_opts=() i
  if command -v nats-server >/dev/null; then
    # The gateway serves git without NATS (it keeps retrying in the background); with its own NATS it runs
    # exactly as deployed.
    port=$(free_port)
    nats-server -a 127.0.0.1 -p "$port" -js -sd "$WORK/nats" >"$WORK/nats.log" 2>&1 &
    PIDS=($! "${PIDS[@]}")
    nats_url=nats://127.0.0.1:$port
  fi
  read -r -a java_opts <<<"${SPB_GATEWAY_JAVA_OPTS:-}"
  if [ -n "$JFR" ]; then
    java_opts+=(-XX:FlightRecorderOptions=stackdepth=512
      "-XX:StartFlightRecording=filename=$JFR,settings=profile,dumponexit=true")
  fi
  : >"$WORK/gateway.log"
  SPB_DATA_DIR=$WORK/data SPB_HTTP_PORT=0 SPB_NATS_URL=$nats_url \
    java "${java_opts[@]}" -jar "$GATEWAY_JAR" >"$WORK/gateway.log" 2>&1 &
  GATEWAY_PID=$!
  PIDS=("$GATEWAY_PID" "${PIDS[@]}")
  for i in $(seq 300); do
    GATEWAY=$(sed -n 's/.*listening on \(http:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/gateway.log" | head -1)
    [ -n "$GATEWAY" ] && break
    kill -0 "${PIDS[0]}" 2>/dev/null || { cat "$WORK/gateway.log" >&2; exit 1; }
    sleep 0.2
  done
  [ -n "$GATEWAY" ] || { log "the gateway did not start"; cat "$WORK/gateway.log" >&2; exit 1; }
  OWNER_TOKEN=$(cat "$WORK/data/initial-owner-token")
  REPOS=$WORK/data/repos
}

api() {
  local method=$1 path=$2 args=()
  if [ $# -gt 2 ]; then
    args=(-H 'Content-Type: application/json' -d "$3")
  fi
  curl -sf -X "$method" -H "Authorization: Bearer $OWNER_TOKEN" "${args[@]}" "$GATEWAY$path" >/dev/null
}

start_baseline() {
  local port conf
  port=$(free_port)
  if command -v lighttpd >/dev/null; then
    BASELINE_NAME="git http-backend behind lighttpd $(lighttpd -v 2>/dev/null | sed -n 's/^lighttpd\/\([^ ]*\).*/\1/p')"
    mkdir -p "$WORK/lighttpd/www"
    printf 'bench:secret\n' >"$WORK/lighttpd/users"
    conf=$WORK/lighttpd/lighttpd.conf
    # Responses stream (stream-response-body = 1). Request bodies cannot: git sends a large push chunked, a CGI
    # program needs CONTENT_LENGTH, and lighttpd answers 411 unless it reads the whole body first (= 0). The
    # push is authenticated with Basic, so both servers see the same 401 round trip before it.
    cat >"$conf" <<EOF
server.modules = ( "mod_access", "mod_alias", "mod_auth", "mod_authn_file", "mod_cgi", "mod_setenv" )
server.bind = "127.0.0.1"
server.port = $port
server.document-root = "$WORK/lighttpd/www"
server.errorlog = "$WORK/lighttpd/error.log"
server.upload-dirs = ( "$WORK/lighttpd" )
server.stream-request-body = 0
server.stream-response-body = 1
server.max-request-size = 4194304
auth.backend = "plain"
auth.backend.plain.userfile = "$WORK/lighttpd/users"
alias.url = ( "/git" => "/usr/lib/git-core/git-http-backend" )
\$HTTP["url"] =~ "^/git" {
  cgi.assign = ( "" => "" )
  setenv.add-environment = ( "GIT_PROJECT_ROOT" => "$REPOS", "GIT_HTTP_EXPORT_ALL" => "" )
}
\$HTTP["querystring"] =~ "service=git-receive-pack" {
  auth.require = ( "" => ( "method" => "basic", "realm" => "git", "require" => "valid-user" ) )
}
\$HTTP["url"] =~ "/git-receive-pack\$" {
  auth.require = ( "" => ( "method" => "basic", "realm" => "git", "require" => "valid-user" ) )
}
EOF
    lighttpd -D -f "$conf" >"$WORK/lighttpd/out.log" 2>&1 &
    BASELINE_PID=$!
    PIDS+=("$BASELINE_PID")
    BASELINE_URL=http://127.0.0.1:$port/git
    BASELINE_PUSH_URL=http://bench:secret@127.0.0.1:$port/git
    wait_http "http://127.0.0.1:$port/"
  else
    BASELINE_NAME="git daemon $(git --version | cut -d' ' -f3) (lighttpd not installed)"
    git daemon --reuseaddr --export-all --enable=receive-pack --base-path="$REPOS" --listen=127.0.0.1 \
      --port="$port" "$REPOS" >"$WORK/daemon.log" 2>&1 &
    BASELINE_PID=$!
    PIDS+=("$BASELINE_PID")
    BASELINE_URL=git://127.0.0.1:$port
    BASELINE_PUSH_URL=$BASELINE_URL
    sleep 1
  fi
}

# ---------------------------------------------------------------------------------------------------------
# Timing: wall-clock seconds of the client command, and CPU seconds of the server process with the children it
# has reaped (lighttpd's git http-backend, git daemon's upload-pack and receive-pack; the gateway has none).
# The machine is shared: wall clock shows what a user waits, server CPU what each server spends, whatever else
# runs at the time.
TICKS=$(getconf CLK_TCK)
cpu_seconds() {
  # Fields 14-17 of /proc/PID/stat: utime, stime, cutime, cstime; the text up to ") " is "pid (name)".
  sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$TICKS" '{ printf "%.2f\n", ($12 + $13 + $14 + $15) / hz }'
}

median() {
  sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A TIMES CPU
# Runs "$@" as a client of server $2 (baseline or ours) and adds its times under $1; a failure fails the script.
timed() {
  local key=$1 pid start end cpu0
  [ "$2" = ours ] && pid=$GATEWAY_PID || pid=$BASELINE_PID
  shift 2
  cpu0=$(cpu_seconds "$pid")
  start=$(date +%s%N)
  "$@"
  end=$(date +%s%N)
  # A CGI child that answered may still be exiting; let the server reap it before reading its CPU.
  sleep 0.3
  TIMES[$key]+="$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }') "
  CPU[$key]+="$(awk -v a="$cpu0" -v b="$(cpu_seconds "$pid")" 'BEGIN { printf "%.2f", b - a }') "
}

run_clone() {
  local server=$1 url=$2 run=$3 dest=$WORK/clone-$1-$3
  timed "clone-$server" "$server" git clone -q --bare "$url/big.git" "$dest"
  [ "$(git -C "$dest" rev-parse main)" = "$BASE" ]
  rm -rf "$dest"
}

run_fetch() {
  local server=$1 url=$2 run=$3 dest=$WORK/fetch-$1-$3
  cp -a "$WORK/client-base.git" "$dest"
  timed "fetch-$server" "$server" git -C "$dest" fetch -q "$url/big.git" '+refs/heads/*:refs/heads/*'
  [ "$(git -C "$dest" rev-parse main)" = "$TIP" ]
  rm -rf "$dest"
}

run_push() {
  local server=$1 url=$2 run=$3 name=push-$1-$3
  if [ "$server" = ours ]; then
    api POST /api/v1/repos "{\"name\":\"$name\"}"
  else
    git init -q --bare "$REPOS/$name.git"
  fi
  timed "push-$server" "$server" git -C "$WORK/src.git" push -q "$url/$name.git" 'base:refs/heads/main'
  [ "$(git -C "$REPOS/$name.git" rev-parse main)" = "$BASE" ]
  if [ "$server" = ours ]; then
    api DELETE "/api/v1/repos/$name"
  else
    rm -rf "${REPOS:?}/$name.git"
  fi
}

# One untimed run against each server first warms the page cache and the gateway's JIT for this operation;
# then the timed runs alternate which server goes first, so neither always follows the other's disk writes.
measure() {
  local op=$1 run
  "run_$op" baseline "$2" 0
  "run_$op" ours "$3" 0
  unset "TIMES[$op-baseline]" "TIMES[$op-ours]" "CPU[$op-baseline]" "CPU[$op-ours]"
  for run in $(seq 1 "$RUNS"); do
    if [ $((run % 2)) = 1 ]; then
      "run_$op" baseline "$2" "$run"; "run_$op" ours "$3" "$run"
    else
      "run_$op" ours "$3" "$run"; "run_$op" baseline "$2" "$run"
    fi
  done
  log "  $op wall: baseline ${TIMES[$op-baseline]}| ours ${TIMES[$op-ours]}"
  log "  $op server CPU: baseline ${CPU[$op-baseline]}| ours ${CPU[$op-ours]}"
}

# ---------------------------------------------------------------------------------------------------------
log "generating the repository ($COMMITS + $FETCH_COMMITS commits) in $WORK"
generate_repository "$WORK/src.git"
start_gateway
api POST /api/v1/repos '{"name":"big"}'
# Both servers serve this one directory: the same packs, the same bitmap.
git -C "$WORK/src.git" push -q "$REPOS/big.git" 'base:refs/heads/main'
git -C "$REPOS/big.git" repack -q -adb --write-bitmap-index
PACK_MB=$(du -cm "$REPOS"/big.git/objects/pack/*.pack | tail -1 | cut -f1)
start_baseline
GATEWAY_PUSH_URL=${GATEWAY/http:\/\//http:\/\/owner:$OWNER_TOKEN@}
BASE=$(git -C "$WORK/src.git" rev-parse base)
TIP=$(git -C "$WORK/src.git" rev-parse main)
log "gateway at $GATEWAY, baseline ($BASELINE_NAME) at $BASELINE_URL; pack $PACK_MB MB"

for op in $OPS; do
  case $op in clone | push | fetch) ;; *) log "unknown operation $op"; exit 2 ;; esac
done
# In this order whatever --ops says: fetch moves the repository past the state clone and push expect.
for op in clone push fetch; do
  case " $OPS " in *" $op "*) ;; *) continue ;; esac
  case $op in
    clone) measure clone "$BASELINE_URL" "$GATEWAY" ;;
    push) measure push "$BASELINE_PUSH_URL" "$GATEWAY_PUSH_URL" ;;
    fetch)
      git clone -q --bare --no-local "$REPOS/big.git" "$WORK/client-base.git"
      git -C "$WORK/src.git" push -q "$REPOS/big.git" main
      measure fetch "$BASELINE_URL" "$GATEWAY" ;;
  esac
done

printf '\nClone, fetch and push of a %d MB repository (%d commits; fetch of %d new commits), median of %d runs\n' \
  "$PACK_MB" "$COMMITS" "$FETCH_COMMITS" "$RUNS"
printf 'baseline: %s; ours: spb-gateway.jar\n' "$BASELINE_NAME"
printf '%-10s %12s %12s %7s   %12s %12s %7s   %s\n' '' 'wall clock' '' '' 'server CPU' '' '' ''
printf '%-10s %12s %12s %7s   %12s %12s %7s   %s\n' operation 'baseline s' 'ours s' ratio 'baseline s' 'ours s' ratio \
  'target (wall)'
for op in clone fetch push; do
  case " $OPS " in *" $op "*) ;; *) continue ;; esac
  b=$(tr ' ' '\n' <<<"${TIMES[$op-baseline]}" | grep . | median)
  o=$(tr ' ' '\n' <<<"${TIMES[$op-ours]}" | grep . | median)
  bc=$(tr ' ' '\n' <<<"${CPU[$op-baseline]}" | grep . | median)
  oc=$(tr ' ' '\n' <<<"${CPU[$op-ours]}" | grep . | median)
  case $op in
    fetch) target=- ;;
    *) target='<= 1.5x' ;;
  esac
  # git daemon reaps its children late, so its CPU may not be counted: then no CPU ratio is printed.
  awk -v op="$op" -v b="$b" -v o="$o" -v bc="$bc" -v oc="$oc" -v t="$target" 'BEGIN {
    cpu = bc > 0 ? sprintf("%6.2fx", oc / bc) : "     -"
    printf "%-10s %12.3f %12.3f %6.2fx   %12.2f %12.2f %s   %s\n", op, b, o, o / b, bc, oc, cpu, t }'
done
