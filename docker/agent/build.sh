#!/usr/bin/env bash
# Builds the sandbox image spbgit/agent:latest without any container registry:
# debootstrap a minimal Debian bookworm from the machine's apt mirror, add the agent user and the
# entrypoint, then `docker import` the root filesystem.
#
# usage: docker/agent/build.sh [--if-missing] [--refresh]
#   --if-missing  exit 0 at once when the image already carries the current inputs label
#   --refresh     rebuild the cached root filesystem (picks up new Debian security updates)
#
# environment:
#   SPB_DEBIAN_MIRROR           Debian mirror for bookworm (default: read from /etc/apt/sources*)
#   SPB_DEBIAN_SECURITY_MIRROR  mirror for bookworm-security (default: read from /etc/apt/sources*;
#                               "none" skips the security upgrade)
#   SPB_CACHE_DIR               where the root filesystem tarball is cached (/var/cache/spbgit)
#   SPB_AGENT_IMAGE             image name (spbgit/agent:latest)
#
# The image label spb.agent.inputs is the sha256 of this script and the entrypoint, so callers can
# tell whether an existing image is current. The root filesystem tarball is keyed by the package
# list and the functions that prepare it, so an entrypoint change rebuilds in seconds.
set -euo pipefail

readonly SUITE=bookworm
# Keep in step with Dockerfile. getent (DNS probes) comes with libc-bin; unshare with util-linux.
readonly PACKAGES=(git ca-certificates socat curl procps iproute2 util-linux mount coreutils libc-bin)
readonly AGENT_UID=1000

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=${SPB_AGENT_IMAGE:-spbgit/agent:latest}
cache_dir=${SPB_CACHE_DIR:-/var/cache/spbgit}
if_missing=false
refresh=false

die() { echo "build.sh: $*" >&2; exit 1; }
step() { echo "[build] $*"; }

for arg in "$@"; do
  case "$arg" in
    --if-missing) if_missing=true ;;
    --refresh) refresh=true ;;
    *) die "unknown argument '$arg' (usage: build.sh [--if-missing] [--refresh])" ;;
  esac
done

command -v docker >/dev/null 2>&1 \
  || die "docker is not installed (run docker/ensure-docker.sh)"
docker info >/dev/null 2>&1 \
  || die "the docker daemon is not reachable (run docker/ensure-docker.sh)"

inputs_hash=$(cat "$here/build.sh" "$here/spb-agent" | sha256sum | cut -d' ' -f1)
current=$(docker image inspect --format '{{ index .Config.Labels "spb.agent.inputs" }}' "$image" \
  2>/dev/null || true)
if [ "$current" = "$inputs_hash" ] && [ "$if_missing" = true ]; then
  step "$image is current (inputs ${inputs_hash:0:12})"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and numeric ownership need it)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (apt-get install debootstrap)"

# Prints "uri suite" for every enabled deb entry in the apt sources, deb822 and one-line formats.
apt_source_entries() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '
      function flush(  n, m, i, j, u, s) {
        if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
          n = split(uris, u, " "); m = split(suites, s, " ")
          for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j]
        }
        types = uris = suites = last = ""; enabled = "yes"
      }
      BEGIN { enabled = "yes" }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { if (last == "uris") uris = uris " " $0; else if (last == "suites") suites = suites " " $0; next }
      {
        key = tolower($1); value = $0; sub(/^[^:]*:[ \t]*/, "", value); last = ""
        if (key == "types:") types = value
        else if (key == "uris:") { uris = value; last = "uris" }
        else if (key == "suites:") { suites = value; last = "suites" }
        else if (key == "enabled:") enabled = value
      }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" {
      i = 2
      if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
      print $i, $(i + 1)
    }' "$f"
  done
}

# The mirror serving $SUITE: an entry for that suite, else any plain Debian archive entry.
find_mirror() {
  local entries
  entries=$(apt_source_entries)
  awk -v suite="$SUITE" '$2 == suite { print $1; exit }' <<<"$entries" | grep . \
    || awk '$2 !~ /-security$/ && $1 ~ /\/debian\/?$/ { print $1; exit }' <<<"$entries"
}

find_security_mirror() {
  apt_source_entries | awk '$2 ~ /-security$/ || $2 ~ /\/updates$/ { print $1; exit }'
}

# Everything from here to prepare_rootfs feeds the rootfs cache key (see rootfs_key).
bootstrap_rootfs() {
  local root=$1 mirror=$2 security=$3
  local include
  include=$(IFS=,; echo "${PACKAGES[*]}")
  step "debootstrap --variant=minbase $SUITE from $mirror"
  debootstrap --variant=minbase --include="$include" "$SUITE" "$root" "$mirror" \
    >"$cache_dir/debootstrap.log" 2>&1 \
    || { tail -n 20 "$cache_dir/debootstrap.log" >&2; die "debootstrap failed (log: $cache_dir/debootstrap.log)"; }
  if [ "$security" != none ]; then
    # The base archive only moves at point releases; git and curl fixes land in -security first.
    step "upgrading from $security $SUITE-security"
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
      "$mirror" "$SUITE" "$mirror" "$SUITE" "$security" "$SUITE" >"$root/etc/apt/sources.list"
    if ! { chroot "$root" apt-get -q update \
        && DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -y \
          -o Dpkg::Options::=--force-confold upgrade; } >"$cache_dir/upgrade.log" 2>&1; then
      tail -n 20 "$cache_dir/upgrade.log" >&2
      die "security upgrade failed (log: $cache_dir/upgrade.log)"
    fi
  fi
}

prepare_rootfs() {
  local root=${1:?}
  if [ "$root" = / ] || [ ! -d "$root/etc/apt" ]; then
    die "refusing to prepare '$root': not a fresh root filesystem"
  fi
  chroot "$root" groupadd --gid "$AGENT_UID" agent
  chroot "$root" useradd --uid "$AGENT_UID" --gid "$AGENT_UID" --home-dir /work/home --no-create-home \
    --shell /bin/sh --comment "SPB Agent" agent
  install -d -o "$AGENT_UID" -g "$AGENT_UID" -m 0755 "$root/work"
  install -d -m 0755 "$root/run/spb"
  # Nothing in the image needs these at run time; the sandbox has no root and no network to use apt.
  : >"$root/etc/apt/sources.list"
  rm -rf --one-file-system "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/apt/* "${root:?}"/var/cache/debconf/*-old \
    "${root:?}"/var/cache/man "${root:?}"/usr/share/man "${root:?}"/usr/share/info \
    "${root:?}"/usr/share/lintian "${root:?}"/usr/share/locale/* "${root:?}"/usr/share/bash-completion \
    "${root:?}"/var/log/* "${root:?}"/tmp/* "${root:?}"/var/tmp/* "${root:?}"/dev/* "${root:?}"/root/.cache
  # Licences stay (copyright files); the rest of /usr/share/doc goes.
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  # Docker bind-mounts its own; the build host's must not leak into the image.
  : >"$root/etc/resolv.conf"
  echo agent >"$root/etc/hostname"
}

rootfs_key() {
  { echo "$SUITE ${PACKAGES[*]} uid=$AGENT_UID"; declare -f bootstrap_rootfs prepare_rootfs; } \
    | sha256sum | cut -c1-16
}

mkdir -p "$cache_dir"
exec 9>"$cache_dir/build.lock"
flock 9

key=$(rootfs_key)
rootfs_tar="$cache_dir/agent-rootfs-$SUITE-$key.tar"
work=$(mktemp -d "$cache_dir/work.XXXXXX")
# --one-file-system: should debootstrap die with /proc or /dev still mounted in the target, the
# cleanup must not reach through into the host's.
trap 'rm -rf --one-file-system "$work"' EXIT
root="$work/rootfs"
started=$SECONDS

if [ "$refresh" = true ] || [ ! -s "$rootfs_tar" ]; then
  mirror=${SPB_DEBIAN_MIRROR:-$(find_mirror || true)}
  [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources*; set SPB_DEBIAN_MIRROR"
  security=${SPB_DEBIAN_SECURITY_MIRROR:-$(find_security_mirror || true)}
  if [ -z "$security" ]; then
    step "no $SUITE-security mirror found in /etc/apt/sources*: skipping the security upgrade"
    security=none
  fi
  mkdir "$root"
  bootstrap_rootfs "$root" "$mirror" "$security"
  prepare_rootfs "$root"
  step "caching root filesystem as $rootfs_tar"
  tar -C "$root" --numeric-owner -cf "$rootfs_tar.tmp" .
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  # Older tarballs belong to package lists or recipes that are no longer used.
  find "$cache_dir" -maxdepth 1 -name "agent-rootfs-*.tar" ! -name "${rootfs_tar##*/}" -delete
else
  step "using cached root filesystem $rootfs_tar"
  mkdir "$root"
  tar -C "$root" --numeric-owner -xf "$rootfs_tar"
fi

install -m 0755 -o 0 -g 0 "$here/spb-agent" "$root/usr/local/bin/spb-agent"

previous=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
step "importing $image"
tar -C "$root" --numeric-owner -c . | docker import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /work' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV HOME=/work/home' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENTRYPOINT ["/usr/local/bin/spb-agent"]' \
  --change "LABEL spb.agent.inputs=$inputs_hash" \
  --change "LABEL spb.agent.rootfs=$key" \
  --message "spb-agent inputs $inputs_hash" \
  - "$image" >/dev/null
if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect --format '{{.Id}}' "$image")" ]; then
  # Each import makes a new untagged image; drop the one this build replaced (kept if a container uses it).
  docker image rm "$previous" >/dev/null 2>&1 || true
fi
step "built $image (inputs ${inputs_hash:0:12}, rootfs $key) in $((SECONDS - started)) s"
