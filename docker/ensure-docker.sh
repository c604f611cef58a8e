#!/usr/bin/env bash
# Makes sure a Docker engine answers `docker info`, without systemd (machines may not run it):
# installs docker.io with apt-get when it is missing, then starts dockerd in the background.
# Idempotent: exits 0 at once when the engine already answers.
#
# environment:
#   SPB_DOCKERD_LOG           dockerd's log file (/var/log/spbgit-dockerd.log)
#   SPB_DOCKER_WAIT_SECONDS   how long to wait for the engine to answer (60)
set -euo pipefail

log_file=${SPB_DOCKERD_LOG:-/var/log/spbgit-dockerd.log}
wait_seconds=${SPB_DOCKER_WAIT_SECONDS:-60}

die() { echo "ensure-docker.sh: $*" >&2; exit 1; }
engine_answers() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }

engine_answers && exit 0

# A remote engine is not ours to start.
[ -z "${DOCKER_HOST:-}" ] || die "the docker engine at DOCKER_HOST=$DOCKER_HOST does not answer"
[ "$(id -u)" -eq 0 ] || die "docker is not running and starting it needs root"

if ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
  echo "[ensure-docker] installing docker.io with apt-get"
  apt_log=$(mktemp /tmp/spbgit-apt.XXXXXX)
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io; } \
      >"$apt_log" 2>&1; then
    die "apt-get install docker.io failed (log: $apt_log)"
  fi
  rm -f "$apt_log"
  # The package may have started the engine itself (on machines that do run an init system).
  engine_answers && exit 0
fi

if pgrep -x dockerd >/dev/null 2>&1; then
  echo "[ensure-docker] dockerd is already starting; waiting for it"
else
  echo "[ensure-docker] starting dockerd (log: $log_file)"
  mkdir -p "$(dirname "$log_file")"
  nohup dockerd >>"$log_file" 2>&1 </dev/null &
  disown
fi

for _ in $(seq "$wait_seconds"); do
  engine_answers && { echo "[ensure-docker] docker is ready"; exit 0; }
  sleep 1
done
die "dockerd did not answer within $wait_seconds s (log: $log_file)"
