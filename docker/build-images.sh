#!/usr/bin/env bash
# Builds the service images without any container registry, the way docker/job-image/build.sh builds the
# sandbox image: debootstrap a minimal Debian bookworm from the machine's apt mirror, `docker import` it
# once as a cached base image, then commit the jar (or the config) as a small layer on top.
#
#   spbgit/gateway:latest  openjdk-17-jre-headless + gateway-verticle/target/spb-gateway.jar, user 10001
#   spbgit/runner:latest   the same base (it carries util-linux/mount for the per-job tmpfs) + spb-runner.jar, root
#   spbgit/nats:latest     Debian's nats-server + docker/nats/nats-server.conf (JetStream in /data), user 4222
#
# usage: docker/build-images.sh [--if-missing] [--refresh] [gateway|runner|nats ...]   (default: all three)
#   --if-missing  skip an image that already carries the current inputs label
#   --refresh     rebuild the cached root filesystems (picks up new Debian security updates)
#
# environment:
#   SPB_DEBIAN_MIRROR, SPB_DEBIAN_SECURITY_MIRROR, SPB_CACHE_DIR   as for docker/job-image/build.sh
#   SPB_IMAGE_PREFIX   repository prefix of the images (spbgit/)
#   SPB_IMAGE_TAG      tag of the images (latest)
#
# Each image carries LABEL spb.<name>.inputs=<sha256 of this script and what it adds on top of the root
# filesystem> and spb.<name>.rootfs=<key>. The agent image is built by docker/job-image/build.sh.
# Needs root, debootstrap and a running engine (docker/ensure-docker.sh); the jars come from
# `mvn -B package -DskipTests`.
set -euo pipefail

readonly SUITE=bookworm
# gateway and runner: the runner mounts each job's /work itself (mount, umount from util-linux/mount).
readonly JRE_PACKAGES=(openjdk-17-jre-headless ca-certificates util-linux mount)
readonly NATS_PACKAGES=(nats-server ca-certificates)
readonly SERVICE_UID=10001
readonly NATS_UID=4222

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/.." && pwd)
cache_dir=${SPB_CACHE_DIR:-/var/cache/spbgit}
prefix=${SPB_IMAGE_PREFIX:-spbgit/}
tag=${SPB_IMAGE_TAG:-latest}
if_missing=false
refresh=false
wanted=()

die() { echo "build-images.sh: $*" >&2; exit 1; }
step() { echo "[build-images] $*"; }

for arg in "$@"; do
  case "$arg" in
    --if-missing) if_missing=true ;;
    --refresh) refresh=true ;;
    gateway|runner|nats) wanted+=("$arg") ;;
    *) die "unknown argument '$arg' (usage: build-images.sh [--if-missing] [--refresh] [gateway|runner|nats ...])" ;;
  esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=(gateway runner nats)

jar_of() {
  case "$1" in
    gateway) echo "$repo_root/gateway-verticle/target/spb-gateway.jar" ;;
    runner) echo "$repo_root/runner-verticle/target/spb-runner.jar" ;;
  esac
}

# Before anything slow: a missing jar is the usual mistake.
for name in "${wanted[@]}"; do
  jar=$(jar_of "$name")
  [ -z "$jar" ] || [ -s "$jar" ] || die "${jar#"$repo_root"/} is missing: run mvn -B package -DskipTests first"
done

command -v docker >/dev/null 2>&1 || die "docker is not installed (run docker/ensure-docker.sh)"
docker info >/dev/null 2>&1 || die "the docker daemon is not reachable (run docker/ensure-docker.sh)"

mkdir -p "$cache_dir" 2>/dev/null || die "cannot create $cache_dir (run as root, or set SPB_CACHE_DIR)"
# Private copies: a concurrent `mvn package` must not change a jar between hashing and copying it.
staging=$(mktemp -d "${TMPDIR:-/tmp}/spb-images.XXXXXX")
work=""
container=""
cleanup() {
  [ -z "$container" ] || docker rm -f "$container" >/dev/null 2>&1 || true
  # --one-file-system: should debootstrap die with /proc still mounted in the target, the cleanup must
  # not reach through into the host's.
  if [ -n "$work" ]; then
    ! mountpoint -q "$work/rootfs/proc" || umount -l "$work/rootfs/proc" || true
    rm -rf --one-file-system "$work"
  fi
  rm -rf --one-file-system "$staging"
}
trap cleanup EXIT

# Prints the inputs hash of an image: this script plus what is added on top of the root filesystem.
inputs_of() {
  local name=$1
  case "$name" in
    gateway|runner)
      install -d "$staging/$name/opt/spb"
      install -m 0644 "$(jar_of "$name")" "$staging/$name/opt/spb/spb-$name.jar"
      cat "$here/build-images.sh" "$staging/$name/opt/spb/spb-$name.jar" | sha256sum | cut -d' ' -f1 ;;
    nats)
      install -d "$staging/nats/etc/nats"
      install -m 0644 "$here/nats/nats-server.conf" "$staging/nats/etc/nats/nats-server.conf"
      cat "$here/build-images.sh" "$here/nats/nats-server.conf" | sha256sum | cut -d' ' -f1 ;;
  esac
}

declare -A inputs=()
todo=()
for name in "${wanted[@]}"; do
  inputs[$name]=$(inputs_of "$name")
  current=$(docker image inspect --format "{{ index .Config.Labels \"spb.$name.inputs\" }}" "$prefix$name:$tag" \
    2>/dev/null || true)
  if [ "$if_missing" = true ] && [ "$current" = "${inputs[$name]}" ]; then
    step "$prefix$name:$tag is current (inputs ${inputs[$name]:0:12})"
  else
    todo+=("$name")
  fi
done
[ ${#todo[@]} -gt 0 ] || exit 0

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and numeric ownership need it)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (apt-get install debootstrap)"

# apt_source_entries, find_mirror, find_security_mirror.
# shellcheck source=debian-mirror.sh
. "$here/debian-mirror.sh"

# bootstrap_rootfs, clean_rootfs and prepare_<flavour> feed the rootfs cache keys (see rootfs_key).
bootstrap_rootfs() {
  local root=$1 mirror=$2 security=$3 include=$4 log=$5
  step "debootstrap --variant=minbase $SUITE ($include) from $mirror"
  debootstrap --variant=minbase --include="$include" "$SUITE" "$root" "$mirror" >"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; die "debootstrap failed (log: $log)"; }
  if [ "$security" != none ]; then
    step "upgrading from $security $SUITE-security"
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
      "$mirror" "$SUITE" "$mirror" "$SUITE" "$security" "$SUITE" >"$root/etc/apt/sources.list"
    # The JRE's maintainer scripts run java, which needs /proc (debootstrap mounted it only for itself).
    mount -t proc proc "$root/proc"
    if ! { chroot "$root" apt-get -q update \
        && DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -y \
          -o Dpkg::Options::=--force-confold upgrade; } >>"$log" 2>&1; then
      umount "$root/proc"
      tail -n 20 "$log" >&2
      die "security upgrade failed (log: $log)"
    fi
    umount "$root/proc"
  fi
}

# The parts every flavour shares: no apt, no docs, no build host leftovers.
clean_rootfs() {
  local root=${1:?}
  if [ "$root" = / ] || [ ! -d "$root/etc/apt" ]; then
    die "refusing to prepare '$root': not a fresh root filesystem"
  fi
  # Nothing in the images needs these at run time; the services never run apt.
  : >"$root/etc/apt/sources.list"
  rm -rf --one-file-system "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/apt/* \
    "${root:?}"/var/cache/debconf/*-old "${root:?}"/var/cache/man "${root:?}"/usr/share/man \
    "${root:?}"/usr/share/info "${root:?}"/usr/share/lintian "${root:?}"/usr/share/locale/* \
    "${root:?}"/usr/share/bash-completion "${root:?}"/var/log/* "${root:?}"/tmp/* "${root:?}"/var/tmp/* \
    "${root:?}"/dev/* "${root:?}"/root/.cache
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  # Docker bind-mounts its own; the build host's must not leak into the images.
  : >"$root/etc/resolv.conf"
}

prepare_jre() {
  local root=${1:?}
  clean_rootfs "$root"
  # The gateway's user; the runner stays root (it mounts tmpfs and talks to the Docker engine).
  chroot "$root" groupadd --gid "$SERVICE_UID" spbgit
  chroot "$root" useradd --no-log-init --uid "$SERVICE_UID" --gid "$SERVICE_UID" --home-dir /var/lib/spbgit \
    --no-create-home --shell /usr/sbin/nologin --comment "SPB Git gateway" spbgit
  install -d -o "$SERVICE_UID" -g "$SERVICE_UID" -m 0700 "$root/var/lib/spbgit"
  install -d -m 0755 "$root/opt/spb"
  install -d -m 0700 "$root/var/lib/spbgit-runner"
  echo spbgit >"$root/etc/hostname"
}

prepare_nats() {
  local root=${1:?}
  clean_rootfs "$root"
  # The package's postinst made a system user with whatever uid was free; pin it, so that files made
  # for the container on the host (TLS key, passwords) can be owned by a known uid.
  chroot "$root" groupmod --gid "$NATS_UID" nats
  chroot "$root" usermod --uid "$NATS_UID" --gid "$NATS_UID" nats
  install -d -o "$NATS_UID" -g "$NATS_UID" -m 0700 "$root/data"
  install -d -m 0755 "$root/etc/nats"
  echo nats >"$root/etc/hostname"
}

packages_of() {
  case "$1" in
    jre) echo "${JRE_PACKAGES[*]}" ;;
    nats) echo "${NATS_PACKAGES[*]}" ;;
  esac
}

rootfs_key() {
  { echo "$SUITE $1 $(packages_of "$1") uid=$SERVICE_UID nats=$NATS_UID"
    declare -f bootstrap_rootfs clean_rootfs "prepare_$1"; } | sha256sum | cut -c1-16
}

# Makes sure spbgit/<flavour>-rootfs:<key> exists (from the cached tarball, or a fresh debootstrap) and
# sets base to its name. Not in a subshell: the EXIT trap must see $work should debootstrap fail.
ensure_base() {
  local flavour=$1 key tar base_repo mirror security
  key=$(rootfs_key "$flavour")
  tar="$cache_dir/$flavour-rootfs-$SUITE-$key.tar"
  base_repo="${prefix}$flavour-rootfs"
  base="$base_repo:$key"
  if [ "$refresh" = true ] || [ ! -s "$tar" ]; then
    mirror=${SPB_DEBIAN_MIRROR:-$(find_mirror || true)}
    [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources*; set SPB_DEBIAN_MIRROR"
    security=${SPB_DEBIAN_SECURITY_MIRROR:-$(find_security_mirror || true)}
    if [ -z "$security" ]; then
      step "no $SUITE-security mirror found in /etc/apt/sources*: skipping the security upgrade"
      security=none
    fi
    work=$(mktemp -d "$cache_dir/work-$flavour.XXXXXX")
    mkdir "$work/rootfs"
    local include
    include=$(packages_of "$flavour" | tr ' ' ,)
    bootstrap_rootfs "$work/rootfs" "$mirror" "$security" "$include" "$cache_dir/$flavour-debootstrap.log"
    "prepare_$flavour" "$work/rootfs"
    step "caching root filesystem as $tar"
    tar -C "$work/rootfs" --numeric-owner -cf "$tar.tmp" .
    mv "$tar.tmp" "$tar"
    rm -rf --one-file-system "$work"
    work=""
    # Older tarballs belong to package lists or recipes that are no longer used.
    find "$cache_dir" -maxdepth 1 -name "$flavour-rootfs-*.tar" ! -name "${tar##*/}" -delete
    docker image rm "$base" >/dev/null 2>&1 || true
  fi
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    step "importing $base"
    docker import --message "spbgit $flavour root filesystem $key" "$tar" "$base" >/dev/null
    docker image ls --format '{{.Repository}}:{{.Tag}}' "$base_repo" | grep -vxF "$base" \
      | xargs -r docker image rm >/dev/null 2>&1 || true
  fi
}

# Commits the staged files of an image on top of its base, with the image's run-time configuration.
commit_image() {
  local name=$1 base=$2 image="$prefix$1:$tag" previous key
  local -a changes
  key=${base##*:}
  case "$name" in
    gateway) changes=(
      --change "USER $SERVICE_UID:$SERVICE_UID"
      --change 'WORKDIR /var/lib/spbgit'
      --change 'ENV SPB_DATA_DIR=/var/lib/spbgit'
      --change 'ENV SPB_HTTP_HOST=0.0.0.0'
      --change 'ENV SPB_HTTP_PORT=8080'
      --change 'VOLUME /var/lib/spbgit'
      --change 'EXPOSE 8080'
      --change 'ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/spb/spb-gateway.jar"]'
      --change 'CMD ["serve"]') ;;
    runner) changes=(
      --change 'USER 0:0'
      --change 'WORKDIR /'
      --change 'ENV SPB_RUNNER_WORK_DIR=/var/lib/spbgit-runner'
      --change 'ENTRYPOINT ["java", "-XX:MaxRAMPercentage=50", "-jar", "/opt/spb/spb-runner.jar"]'
      --change 'CMD []') ;;
    nats) changes=(
      --change 'USER nats'
      --change 'WORKDIR /data'
      --change 'VOLUME /data'
      --change 'EXPOSE 4222 6222 8222'
      --change 'ENTRYPOINT ["/usr/sbin/nats-server"]'
      --change 'CMD ["--config", "/etc/nats/nats-server.conf"]') ;;
  esac
  previous=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
  # Never started: the container only carries the staged files into a new layer.
  container=$(docker create --network none "$base" /bin/true)
  # Only the files and their own directories: an entry for an existing /opt or /etc would reset its owner.
  (cd "$staging/$name" && find . -mindepth 2 -print | sed 's|^\./||' | sort) \
    | tar -C "$staging/$name" --owner=0 --group=0 --numeric-owner --no-recursion -c -T - \
    | docker cp - "$container:/"
  docker commit "${changes[@]}" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL spb.$name.inputs=${inputs[$name]}" \
    --change "LABEL spb.$name.rootfs=$key" \
    --change "LABEL org.opencontainers.image.title=spbgit-$name" \
    --message "spbgit $name inputs ${inputs[$name]}" \
    "$container" "$image" >/dev/null
  docker rm -f "$container" >/dev/null
  container=""
  if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect --format '{{.Id}}' "$image")" ]; then
    # Each build makes a new image; drop the one it replaced (kept while a container uses it).
    docker image rm "$previous" >/dev/null 2>&1 || true
  fi
  step "built $image (inputs ${inputs[$name]:0:12}, rootfs $key)"
}

exec 9>"$cache_dir/images.lock"
flock 9
started=$SECONDS
base=""
for name in "${todo[@]}"; do
  case "$name" in gateway|runner) flavour=jre ;; nats) flavour=nats ;; esac
  ensure_base "$flavour"
  commit_image "$name" "$base"
done
step "done in $((SECONDS - started)) s"
