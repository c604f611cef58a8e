#!/usr/bin/env bash
# Runs the two-node layout of gateway-node.yaml and runner-node.yaml on this one machine with plain
# `docker run` (for machines without the compose plugin), then pushes a job through it:
#
#   nats     spbgit/nats with nats/nats-server.conf: JetStream, TLS, a gateway and a runner user
#   gateway  spbgit/gateway, at a fixed address of a user-defined bridge network (its SPB_PUBLIC_URL)
#   runner   spbgit/runner in a container (docker socket, CAP_SYS_ADMIN, shared work dir), or with
#            --runner-on-host the runner jar straight on this host
#
# It creates a repository, pushes a commit with git, starts a job ({"exec":"echo hi > x"}), waits until it
# has finished and checks that it ended ok with a proposal ref and a log. Then it starts a second job,
# rotates the job-token signing key and restarts the gateway while that job runs (the job must still
# push and end ok), runs a third job with the new key, and a fourth that overfills its /work (it must
# end disk_limit: the runner's own tmpfs works from inside its container). Everything it made (containers, network,
# volume, secrets, work directory) is removed on exit, unless --keep (then it prints how to clean up).
# Only this machine's own addresses and the containers it created are ever contacted.
#
# usage: docker/compose/try-local.sh [--runner-on-host] [--keep]
#
# environment:
#   SPB_TRY_SUBNET   the bridge network's subnet (172.29.213.0/24); the gateway gets its .10 address
#   SPB_TRY_NAME     prefix of everything created (spbtry)
#   SPB_TRY_RUNNER_CAPS  capabilities the runner container gets (SYS_ADMIN, as in runner-node.yaml)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
subnet=${SPB_TRY_SUBNET:-172.29.213.0/24}
name=${SPB_TRY_NAME:-spbtry}
runner_on_host=false
keep=false
for arg in "$@"; do
  case "$arg" in
    --runner-on-host) runner_on_host=true ;;
    --keep) keep=true ;;
    *) echo "try-local.sh: unknown argument '$arg' (usage: try-local.sh [--runner-on-host] [--keep])" >&2; exit 2 ;;
  esac
done

die() { echo "try-local.sh: $*" >&2; exit 1; }
say() { echo "[try-local] $*"; }

[ "$(id -u)" -eq 0 ] || die "must run as root (the runner mounts tmpfs; the secrets are chowned)"
for image in spbgit/nats spbgit/gateway spbgit/runner spbgit/agent; do
  docker image inspect "$image:latest" >/dev/null 2>&1 \
    || die "$image:latest is missing: run docker/build-images.sh and docker/job-image/build.sh first"
done
for tool in curl git openssl; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
if [ "$runner_on_host" = true ]; then
  [ -s "$repo_root/runner-verticle/target/spb-runner.jar" ] || die "run mvn -B package -DskipTests first"
fi

prefix=${subnet%.*}
gateway_ip="$prefix.10"
nats_ip="$prefix.11"
net="$name-net"
secrets=$(mktemp -d "/tmp/$name-secrets.XXXXXX")
work="/var/lib/$name-runner-work"
runner_id="$name-runner"
created=()
host_runner=""

cleanup() {
  local rc=$?
  if [ "$keep" = true ]; then
    say "kept running. Clean up with:"
    echo "  docker rm -f ${created[*]}; docker volume rm $name-gateway-data $name-nats-data; docker network rm $net"
    [ -z "$host_runner" ] || echo "  kill $host_runner"
    echo "  SPB_RUNNER_WORK_DIR=$work $repo_root/docker/runner/prepare-host.sh --undo; rm -rf $work $secrets"
    exit "$rc"
  fi
  say "cleaning up"
  if [ -n "$host_runner" ]; then kill "$host_runner" 2>/dev/null || true; wait "$host_runner" 2>/dev/null || true; fi
  # The runner's own job containers, should it have died before removing them.
  docker ps -aq --filter "label=spb.runner=$runner_id" | xargs -r docker rm -f >/dev/null 2>&1 || true
  [ ${#created[@]} -eq 0 ] || docker rm -f "${created[@]}" >/dev/null 2>&1 || true
  docker volume rm "$name-gateway-data" "$name-nats-data" >/dev/null 2>&1 || true
  docker network rm "$net" >/dev/null 2>&1 || true
  SPB_RUNNER_WORK_DIR=$work "$repo_root/docker/runner/prepare-host.sh" --undo >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work" "$secrets"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# NATS must be reachable under its name (from the gateway) and its address (from a runner on the host).
SPB_SECRETS_DIR=$secrets "$here/gen-nats-tls.sh" "$nats_ip" >/dev/null
SPB_SECRETS_DIR=$secrets "$here/gen-nats-passwords.sh" >/dev/null

say "network $net ($subnet)"
docker network create --subnet "$subnet" "$net" >/dev/null \
  || die "cannot create network $net on $subnet (in use? set SPB_TRY_SUBNET)"

say "nats ($nats_ip): JetStream, TLS, users gateway and runner"
created+=("$name-nats")
docker run -d --name "$name-nats" --network "$net" --ip "$nats_ip" --network-alias nats \
  --read-only --cap-drop ALL --security-opt no-new-privileges:true \
  -v "$here/nats/nats-server.conf:/etc/nats/nats-server.conf:ro" \
  -v "$secrets/passwords.conf:/etc/nats/passwords.conf:ro" \
  -v "$secrets/tls:/etc/nats/tls:ro" \
  -v "$name-nats-data:/data" \
  spbgit/nats:latest >/dev/null

# The runner's public key goes here once it has made it; the gateway seals job tokens to the keys in it.
install -d -m 0755 "$secrets/runner-keys"
say "gateway (http://$gateway_ip:8080)"
created+=("$name-gateway")
docker run -d --name "$name-gateway" --network "$net" --ip "$gateway_ip" \
  --read-only --tmpfs /tmp:size=256m,mode=1777 --cap-drop ALL --security-opt no-new-privileges:true \
  -e SPB_PUBLIC_URL="http://$gateway_ip:8080" \
  -e SPB_NATS_URL=tls://nats:4222 -e SPB_NATS_USER=gateway \
  -e SPB_NATS_PASSWORD_FILE=/run/secrets/nats-gateway-password -e SPB_NATS_CA=/run/secrets/nats-ca.pem \
  -v "$secrets/gateway.password:/run/secrets/nats-gateway-password:ro" \
  -v "$secrets/tls/ca.pem:/run/secrets/nats-ca.pem:ro" \
  -v "$name-gateway-data:/var/lib/spbgit" \
  -e SPB_RUNNER_KEYS=/etc/spbgit/runner-keys -v "$secrets/runner-keys:/etc/spbgit/runner-keys:ro" \
  spbgit/gateway:latest >/dev/null

# The runner runs only requests signed with the gateway's job-bus keys: give it their public halves, which the
# gateway makes before it listens.
for _ in $(seq 120); do
  docker logs "$name-gateway" 2>&1 | grep -q "listening on" && break
  sleep 0.5
done
docker cp "$name-gateway:/var/lib/spbgit/keys/job-bus" "$secrets/gateway-keys" >/dev/null \
  || { docker logs "$name-gateway" 2>&1 | tail -n 20 >&2; die "the gateway made no job-bus key"; }
chmod -R a+rX "$secrets/gateway-keys"

SPB_RUNNER_WORK_DIR=$work "$repo_root/docker/runner/prepare-host.sh" >/dev/null
runner_env=(SPB_RUNNER_ID="$runner_id" SPB_RUNNER_SLOTS=2 SPB_RUNNER_WORK_DIR="$work"
  SPB_NATS_USER=runner SPB_LIMIT_MEMORY=512m SPB_LIMIT_DISK=64m SPB_LIMIT_WALL=5m)
if [ "$runner_on_host" = true ]; then
  say "runner on this host (log: $secrets/runner.log)"
  env "${runner_env[@]}" SPB_NATS_URL="tls://$nats_ip:4222" SPB_NATS_PASSWORD_FILE="$secrets/runner.password" \
    SPB_NATS_CA="$secrets/tls/ca.pem" SPB_GATEWAY_KEYS="$secrets/gateway-keys" \
    java -jar "$repo_root/runner-verticle/target/spb-runner.jar" \
    >"$secrets/runner.log" 2>&1 &
  host_runner=$!
else
  say "runner in a container (docker socket, CAP_SYS_ADMIN, $work shared)"
  runner_env_args=()
  for e in "${runner_env[@]}"; do runner_env_args+=(-e "$e"); done
  runner_caps=()
  for c in ${SPB_TRY_RUNNER_CAPS:-SYS_ADMIN}; do runner_caps+=(--cap-add "$c"); done
  created+=("$name-runner")
  docker run -d --name "$name-runner" --hostname "$runner_id" --network "$net" \
    --read-only --tmpfs /tmp:size=64m,mode=1777 \
    --cap-drop ALL "${runner_caps[@]}" --security-opt no-new-privileges:true \
    "${runner_env_args[@]}" \
    -e SPB_NATS_URL=tls://nats:4222 \
    -e SPB_NATS_PASSWORD_FILE=/run/secrets/nats-runner-password -e SPB_NATS_CA=/run/secrets/nats-ca.pem \
    -v "$secrets/runner.password:/run/secrets/nats-runner-password:ro" \
    -v "$secrets/tls/ca.pem:/run/secrets/nats-ca.pem:ro" \
    -e SPB_GATEWAY_KEYS=/etc/spbgit/gateway-keys -v "$secrets/gateway-keys:/etc/spbgit/gateway-keys:ro" \
    -v /var/run/docker.sock:/var/run/docker.sock \
    --mount "type=bind,source=$work,target=$work,bind-propagation=rshared" \
    spbgit/runner:latest >/dev/null
fi

runner_log() {
  if [ "$runner_on_host" = true ]; then cat "$secrets/runner.log"; else docker logs "$name-runner" 2>&1; fi
}
base="http://$gateway_ip:8080"
# Waits up to a minute for the gateway to answer /readyz.
await_gateway() {
  for _ in $(seq 120); do
    curl -fsS "$base/readyz" >/dev/null 2>&1 && break
    sleep 0.5
  done
}
# Starts a job of task $1 running $2 on the demo repository; sets job (the answer) and id.
start_job() {
  job=$(curl -fsS -H "$auth" -d "{\"task\":\"$1\",\"exec\":\"$2\"}" "$base/api/v1/repos/demo/agent-jobs")
  id=$(printf '%s' "$job" | sed -n 's/.*"id" *: *"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || die "no job id in: $job"
}
# Waits up to two minutes for job $1 to finish; sets state to its last answer.
await_job() {
  for _ in $(seq 240); do
    state=$(curl -fsS -H "$auth" "$base/api/v1/repos/demo/agent-jobs/$1")
    printf '%s' "$state" | grep -q '"status" *: *"finished"' && break
    sleep 0.5
  done
}
await_gateway
curl -fsS "$base/readyz" >/dev/null 2>&1 || { docker logs "$name-gateway" 2>&1 | tail -n 20 >&2; die "the gateway is not ready"; }
say "gateway ready: $(curl -fsS "$base/readyz")"
for _ in $(seq 120); do
  runner_log | grep -q "ready with" && break
  sleep 0.5
done
runner_log | grep -q "ready with" || { runner_log | tail -n 20 >&2; die "the runner did not start"; }
say "runner ready: $(runner_log | grep -m1 -o 'ready with.*')"
# Authorize the runner: the gateway reads its runner keys again on the next job.
install -m 0644 "$work/runner-key.pub.pem" "$secrets/runner-keys/$runner_id.pub.pem"

token=$(docker exec "$name-gateway" cat /var/lib/spbgit/initial-owner-token)
auth="Authorization: Bearer $token"
curl -fsS -H "$auth" -d '{"name":"demo"}' "$base/api/v1/repos" >/dev/null
seed="$secrets/seed"
git init -q -b main "$seed"
echo "# demo" >"$seed/README.md"
git -C "$seed" add README.md
git -C "$seed" -c user.name=try -c user.email=try@localhost commit -qm "Start the demo"
git -C "$seed" push -q "http://owner:$token@$gateway_ip:8080/demo.git" main
say "pushed main to $base/demo.git"

start_job t "echo hi > x"
say "job $id: $job"
state=""
await_job "$id"
say "job $id: $state"
git -C "$seed" fetch -q "http://$gateway_ip:8080/demo.git" "refs/agents/$id/proposal"
say "proposal: $(git -C "$seed" show --stat --format='%h %s' FETCH_HEAD | tr '\n' ' ')"

printf '%s' "$state" | grep -q '"exit_reason" *: *"ok"' || { runner_log | tail -n 30 >&2; die "the job did not end ok"; }
log_lines=$(curl -fsS -H "$auth" "$base/api/v1/repos/demo/agent-jobs/$id/log" | wc -l)
say "job $id log: $log_lines lines replayed from JetStream"

# A job whose token was signed before a key rotation, still running while the gateway restarts: it must
# push with the retired key and its end must be picked up by the restarted gateway.
start_job t2 "sleep 20; echo two > y"
id2=$id
say "job $id2 started; rotating the signing key and restarting the gateway meanwhile"
docker run --rm --network none -v "$name-gateway-data:/var/lib/spbgit" spbgit/gateway:latest rotate-signing-key
docker restart "$name-gateway" >/dev/null
await_gateway
say "gateway back: $(curl -fsS "$base/readyz"); retired keys: $(docker exec "$name-gateway" ls /var/lib/spbgit/keys/retired)"
for id in "$id2" third; do
  if [ "$id" = third ]; then
    start_job t3 "echo three > z"
  fi
  await_job "$id"
  say "job $id: $(printf '%s' "$state" | grep -o '"exit_reason" *: *"[^"]*"'), $(printf '%s' "$state" | grep -o '"refs_written" *: *\[[^]]*\]' | grep -o 'refs/agents/[^"]*')"
  printf '%s' "$state" | grep -q '"exit_reason" *: *"ok"' || { runner_log | tail -n 30 >&2; die "job $id did not end ok"; }
  printf '%s' "$state" | grep -q "refs/agents/$id/proposal" || die "job $id pushed no proposal"
done

# /work is the runner's own tmpfs (64 MiB here), mounted inside its container and seen by the engine:
# overfilling it must end disk_limit, not the exit_code:<n> of Docker's tmpfs fallback.
start_job t4 "head -c 100000000 /dev/zero > big"
await_job "$id"
say "job $id (writes 100 MB into a 64 MiB /work): $(printf '%s' "$state" | grep -o '"exit_reason" *: *"[^"]*"')"
printf '%s' "$state" | grep -q '"exit_reason" *: *"disk_limit"' || { runner_log | tail -n 30 >&2; die "job $id did not end disk_limit"; }

curl -fsS "$base/metrics" | grep -E '^spb_(jobs|job_queue_depth|jobs_finished_total)' | sed 's/^/  /'
violations=$(docker logs "$name-nats" 2>&1 | grep -c -i "violation" || true)
say "NATS permission violations logged: $violations"
[ "$violations" -eq 0 ] || { docker logs "$name-nats" 2>&1 | grep -i "violation" | head -n 20; die "a role lacks a permission"; }
say "ok: jobs ran through nats (TLS, per-role users), the gateway container and the runner"
