#!/usr/bin/env bash
# Builds the sandbox images spbgit/agent:latest (variant base), spbgit/agent-python:latest and
# spbgit/agent-node:latest without any container registry: debootstrap a minimal Debian bookworm from the
# machine's apt mirror, `docker import` the root filesystem, add the coding-agent CLIs (Claude Code, Codex,
# Qwen Code with its Node, from docker/job-image/fetch-agent-clis.sh) under /opt/spb/agents as one layer shared
# by every variant, add a variant's toolchain packages as a layer on top of it, then commit the entrypoint,
# the agent jar and the agent user as a small last layer. The jar is built by Maven first:
# mvn -B package -pl builtin-agent -am (builtin-agent/target/spb-builtin-agent.jar).
#
# usage: docker/job-image/build.sh [--if-missing] [--refresh] [--variant NAME]... [NAME]...
#   NAME          a variant of the VARIANTS table below, or all; without any, base
#   --if-missing  skip every variant whose image already carries the current inputs label
#   --refresh     rebuild the cached root filesystem and the variants' package layers (picks up new
#                 Debian security updates)
#
# environment:
#   SPB_DEBIAN_MIRROR           Debian mirror for bookworm (default: read from /etc/apt/sources*)
#   SPB_DEBIAN_SECURITY_MIRROR  mirror for bookworm-security (default: read from /etc/apt/sources*;
#                               "none" skips the security upgrade)
#   SPB_CACHE_DIR               where the root filesystem tarball, the downloaded .debs and the unpacked
#                               agent CLIs are cached (/var/cache/spbgit)
#   SPB_NPM_CACHE               where fetch-agent-clis.sh keeps the CLIs' npm tarballs (~/.cache/spbgit/npm);
#                               once filled, the build needs no registry
#   SPB_AGENT_IMAGE             the base variant's image (spbgit/agent:latest); variant V is named by
#                               appending -V to its repository (spbgit/agent-python:latest)
#   SPB_AGENT_ROOTFS_IMAGE      repository of the root filesystem image (spbgit/agent-rootfs); variant V's
#                               package layer is <that>-V:<key>
#   SPB_AGENT_JAR               the llm-mode agent (default: builtin-agent/target/spb-builtin-agent.jar of this checkout)
#   SPB_SANDBOX_UID             uid and gid of the image's agent user (2000000000); the runner's
#                               SPB_SANDBOX_UID must be the same (it checks the spb.agent.uid label)
#
# The image label spb.agent.inputs is the sha256 of this script, the entrypoint, fetch-agent-clis.sh (its
# pins), the agent jar, the agent uid and (but for base) the variant name, so callers can tell whether an
# existing image is current; spb.agent.variant names the variant, spb.agent.clis the CLIs and their
# versions (claude-code@2.1.328,codex@0.169.0,qwen-code@0.24.4), which the runner checks a job's agent
# against. The root filesystem tarball is keyed by the package list and the functions that prepare it, the
# CLIs' layer by the root filesystem image and fetch-agent-clis.sh, a variant's package layer by the image
# (root filesystem and CLIs) it was installed on, its packages and the function that installs them, so an entrypoint, jar or uid change
# rebuilds in seconds: the agent user's passwd and group entries live in the small top layer, and no file
# in the image is owned by the agent (its /work is always a tmpfs or a bind mount over the empty
# directory), so a uid past tar's octal limit never reaches the imported tarball.
# Needs root, debootstrap and a running engine (docker/ensure-docker.sh).
set -euo pipefail

readonly SUITE=bookworm
# Keep in step with Dockerfile. getent (DNS probes) comes with libc-bin; unshare with util-linux;
# the JRE runs the llm-mode agent (/opt/spb/agent.jar).
readonly PACKAGES=(git ca-certificates socat curl procps iproute2 util-linux mount coreutils libc-bin
  openjdk-17-jre-headless)
# The image catalogue: each variant is the root filesystem above plus these packages, installed as one
# layer (shared on disk by every variant) with apt's recommends left out, as debootstrap does. A new
# variant is one line here; the runner offers every variant whose image exists (docs/operations.md).
readonly VARIANTS='
base
python  python3 python3-venv python3-pip python3-pytest
node    nodejs npm
'
# Why so high: docs/sandbox.md ("The sandbox uid"). Keep the default in step with RunnerConfig.
readonly AGENT_UID=${SPB_SANDBOX_UID:-2000000000}
# Where the coding-agent CLIs live in the image (bin/claude, bin/codex, bin/qwen); spb-agent runs them
# from there.
readonly AGENTS_DIR=opt/spb/agents

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
base_agent_image=${SPB_AGENT_IMAGE:-spbgit/agent:latest}
agent_jar=${SPB_AGENT_JAR:-$(cd "$here/../.." && pwd)/builtin-agent/target/spb-builtin-agent.jar}
cache_dir=${SPB_CACHE_DIR:-/var/cache/spbgit}
if_missing=false
refresh=false
requested=()

die() { echo "build.sh: $*" >&2; exit 1; }
step() { echo "[build] $*"; }
variant_names() { awk 'NF { print $1 }' <<<"$VARIANTS"; }
# The variant's packages on top of the root filesystem, one line (empty for base); fails for no such variant.
variant_packages() {
  awk -v v="$1" '$1 == v { $1 = ""; sub(/^ +/, ""); print; found = 1 } END { exit !found }' <<<"$VARIANTS"
}
# spbgit/agent:latest for base, spbgit/agent-python:latest for python.
variant_image() {
  local repo=$base_agent_image tag=latest
  # The tag follows the last colon, unless that colon is a registry's host:port.
  if [[ "${base_agent_image##*/}" == *:* ]]; then
    repo=${base_agent_image%:*}
    tag=${base_agent_image##*:}
  fi
  if [ "$1" = base ]; then echo "$repo:$tag"; else echo "$repo-$1:$tag"; fi
}
usage="usage: build.sh [--if-missing] [--refresh] [--variant NAME]... [NAME]... (NAME: $(variant_names | paste -sd' '), all)"

while [ $# -gt 0 ]; do
  case "$1" in
    --if-missing) if_missing=true ;;
    --refresh) refresh=true ;;
    --variant) [ $# -ge 2 ] || die "$usage"; requested+=("$2"); shift ;;
    --variant=*) requested+=("${1#--variant=}") ;;
    -*) die "unknown argument '$1' ($usage)" ;;
    *) requested+=("$1") ;;
  esac
  shift
done
[ ${#requested[@]} -gt 0 ] || requested=(base)
variants=()
for v in "${requested[@]}"; do
  if [ "$v" = all ]; then
    mapfile -t variants < <(variant_names)
    break
  fi
  variant_packages "$v" >/dev/null || die "unknown variant '$v' ($usage)"
  [[ " ${variants[*]} " == *" $v "* ]] || variants+=("$v")
done

[[ "$AGENT_UID" =~ ^[1-9][0-9]{0,9}$ ]] && [ "$AGENT_UID" -le 2147483647 ] \
  || die "SPB_SANDBOX_UID must be a uid from 1 to 2147483647, got '$AGENT_UID'"

command -v docker >/dev/null 2>&1 \
  || die "docker is not installed (run docker/ensure-docker.sh)"
docker info >/dev/null 2>&1 \
  || die "the docker daemon is not reachable (run docker/ensure-docker.sh)"

[ -s "$agent_jar" ] || die "agent jar $agent_jar is missing: run mvn -B package -pl builtin-agent -am first"
# Hashed once: the jar is the same for every variant. base keeps the formula of the Dockerfile's comment.
common_inputs=$({ cat "$here/build.sh" "$here/spb-agent" "$here/fetch-agent-clis.sh" "$agent_jar"
  echo "uid=$AGENT_UID"; } | sha256sum)
agent_clis=$("$here/fetch-agent-clis.sh" --list)
inputs_hash() {
  if [ "$1" = base ]; then
    cut -d' ' -f1 <<<"$common_inputs"
  else
    { echo "$common_inputs"; echo "variant=$1"; } | sha256sum | cut -d' ' -f1
  fi
}
current_label() {
  docker image inspect --format '{{ index .Config.Labels "spb.agent.inputs" }}' "$1" 2>/dev/null || true
}
if [ "$if_missing" = true ]; then
  stale=()
  for v in "${variants[@]}"; do
    if [ "$(current_label "$(variant_image "$v")")" = "$(inputs_hash "$v")" ]; then
      step "$(variant_image "$v") is current (inputs $(inputs_hash "$v" | cut -c1-12))"
    else
      stale+=("$v")
    fi
  done
  [ ${#stale[@]} -gt 0 ] || exit 0
  variants=("${stale[@]}")
fi

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and numeric ownership need it)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (apt-get install debootstrap)"

# apt_source_entries, find_mirror, find_security_mirror.
# shellcheck source=../debian-mirror.sh
. "$here/../debian-mirror.sh"

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
    # The JRE's maintainer scripts run java, which needs /proc (debootstrap mounted it only for itself).
    mount -t proc proc "$root/proc"
    if ! { chroot "$root" apt-get -q update \
        && DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -y \
          -o Dpkg::Options::=--force-confold upgrade; } >"$cache_dir/upgrade.log" 2>&1; then
      umount "$root/proc"
      tail -n 20 "$cache_dir/upgrade.log" >&2
      die "security upgrade failed (log: $cache_dir/upgrade.log)"
    fi
    umount "$root/proc"
  fi
}

prepare_rootfs() {
  local root=${1:?}
  if [ "$root" = / ] || [ ! -d "$root/etc/apt" ]; then
    die "refusing to prepare '$root': not a fresh root filesystem"
  fi
  # Root's: only a mount point, covered by the job's /work. The agent user comes with the top layer.
  install -d -m 0755 "$root/work"
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

# Runs inside a container of the root filesystem image, as root, with the host's network for the mirror and
# the .deb cache mounted at /var/cache/apt/archives. The same sources and the same clean-up as the root
# filesystem's, so a variant is the base plus its packages and nothing else. Feeds the layer's key.
install_variant_packages() {
  local suite=$1 mirror=$2 security=$3
  shift 3
  printf 'deb %s %s main\ndeb %s %s-updates main\n' "$mirror" "$suite" "$mirror" "$suite" >/etc/apt/sources.list
  [ "$security" = none ] || printf 'deb %s %s-security main\n' "$security" "$suite" >>/etc/apt/sources.list
  apt-get -q update
  DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends \
    -o Dpkg::Options::=--force-confold -o Dpkg::Options::=--force-unsafe-io install "$@"
  : >/etc/apt/sources.list
  # Not the archives: they are the mounted cache, and stay out of the layer.
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /var/cache/man /usr/share/man \
    /usr/share/info /usr/share/lintian /usr/share/locale/* /usr/share/bash-completion /var/log/* /tmp/* \
    /var/tmp/* /root/.cache /root/.npm
  find /usr/share/doc -mindepth 1 ! -type d ! -name copyright -delete
  find /usr/share/doc -mindepth 1 -type d -empty -delete
}

# The agent user, written into copies of the account files of the container $1, in $2/etc. Not useradd:
# it would also size /var/log/lastlog and faillog for the uid (sparse files of hundreds of GB at a high
# uid). From the container, not the tarball: a variant's packages may add system users.
add_agent_user() {
  local from=$1 dir=$2 f
  install -d -m 0755 "$dir/etc"
  for f in passwd group shadow gshadow; do
    docker cp "$from:/etc/$f" - | tar -C "$dir/etc" -xpf - --numeric-owner
  done
  ! grep -q "^agent:\|^[^:]*:[^:]*:$AGENT_UID:" "$dir/etc/passwd" \
    || die "the root filesystem already has an agent user or uid $AGENT_UID"
  echo "agent:x:$AGENT_UID:$AGENT_UID:SPB Agent:/work/home:/bin/sh" >>"$dir/etc/passwd"
  echo "agent:x:$AGENT_UID:" >>"$dir/etc/group"
  echo "agent:!::0:99999:7:::" >>"$dir/etc/shadow"
  echo "agent:!::" >>"$dir/etc/gshadow"
}

rootfs_key() {
  { echo "$SUITE ${PACKAGES[*]}"; declare -f bootstrap_rootfs prepare_rootfs; } \
    | sha256sum | cut -c1-16
}

# The image a variant's layer was installed on is part of its key: a --refresh'd (re-imported) root
# filesystem or new CLI pins rebuild every variant on top of it.
variant_key() {
  { docker image inspect --format '{{.Id}}' "$agents_image"; echo "$SUITE $(variant_packages "$1")"
    declare -f install_variant_packages; } | sha256sum | cut -c1-16
}

mirror=""
security=""
find_mirrors() {
  [ -z "$mirror" ] || return 0
  mirror=${SPB_DEBIAN_MIRROR:-$(find_mirror || true)}
  [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources*; set SPB_DEBIAN_MIRROR"
  security=${SPB_DEBIAN_SECURITY_MIRROR:-$(find_security_mirror || true)}
  if [ -z "$security" ]; then
    step "no $SUITE-security mirror found in /etc/apt/sources*: skipping the security upgrade"
    security=none
  fi
}

mkdir -p "$cache_dir"
exec 9>"$cache_dir/build.lock"
flock 9

key=$(rootfs_key)
rootfs_tar="$cache_dir/agent-rootfs-$SUITE-$key.tar"
base_repo=${SPB_AGENT_ROOTFS_IMAGE:-spbgit/agent-rootfs}
base_image="$base_repo:$key"
work=""
layer=""
container=""
cleanup() {
  [ -z "$container" ] || docker rm -f "$container" >/dev/null 2>&1 || true
  # --one-file-system: should debootstrap die with /proc or /dev still mounted in the target, the
  # cleanup must not reach through into the host's.
  if [ -n "$work" ]; then
    ! mountpoint -q "$work/rootfs/proc" || umount -l "$work/rootfs/proc" || true
    rm -rf --one-file-system "$work"
  fi
  [ -z "$layer" ] || rm -rf --one-file-system "$layer"
}
trap cleanup EXIT
started=$SECONDS

if [ "$refresh" = true ] || [ ! -s "$rootfs_tar" ]; then
  find_mirrors
  work=$(mktemp -d "$cache_dir/work.XXXXXX")
  mkdir "$work/rootfs"
  bootstrap_rootfs "$work/rootfs" "$mirror" "$security"
  prepare_rootfs "$work/rootfs"
  step "caching root filesystem as $rootfs_tar"
  tar -C "$work/rootfs" --numeric-owner -cf "$rootfs_tar.tmp" .
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  # Older tarballs belong to package lists or recipes that are no longer used.
  find "$cache_dir" -maxdepth 1 -name "agent-rootfs-*.tar" ! -name "${rootfs_tar##*/}" -delete
  docker image rm "$base_image" >/dev/null 2>&1 || true
else
  step "using cached root filesystem $rootfs_tar"
fi

# The root filesystem is its own image and the entrypoint plus the agent jar a second, small layer on
# top: a change to either then costs a `docker commit`, not a re-import of the whole tarball.
if ! docker image inspect "$base_image" >/dev/null 2>&1; then
  step "importing $base_image"
  docker import --message "spb-agent root filesystem $key" "$rootfs_tar" "$base_image" >/dev/null
  docker image ls --format '{{.Repository}}:{{.Tag}}' "$base_repo" | grep -vxF "$base_image" \
    | xargs -r docker image rm >/dev/null 2>&1 || true
fi

# The CLIs' layer: below the variants' packages, so one copy on disk serves every variant (they are
# about a gigabyte). Unpacked once into the cache directory, offline when SPB_NPM_CACHE holds the pinned
# tarballs; Node's C headers stay out (nothing in the sandbox builds native addons).
agents_key() {
  { docker image inspect --format '{{.Id}}' "$base_image"; cat "$here/fetch-agent-clis.sh"; declare -f agents_layer; } \
    | sha256sum | cut -c1-16
}
agents_layer() {
  local clis="$cache_dir/agent-clis/$AGENTS_DIR"
  mkdir -p "$clis"
  "$here/fetch-agent-clis.sh" "$clis"
  container=$(docker create --network none "$base_image" /bin/true)
  # Readable and runnable by the agent user, writable by nobody else: the sandbox runs them as its uid.
  tar -C "$cache_dir/agent-clis" --owner=0 --group=0 --numeric-owner --mode=a+rX,go-w \
    --exclude="$AGENTS_DIR/node/include" --no-recursion -c opt/spb --recursion "$AGENTS_DIR" \
    | docker cp - "$container:/"
  docker commit --change 'ENTRYPOINT []' --change 'CMD ["/bin/bash"]' \
    --message "spb-agent coding-agent CLIs $agent_clis" "$container" "$1" >/dev/null
  docker rm "$container" >/dev/null
  container=""
}
agents_repo="$base_repo-agents"
agents_image="$agents_repo:$(agents_key)"
if [ "$refresh" = true ] || ! docker image inspect "$agents_image" >/dev/null 2>&1; then
  step "adding the coding-agent CLIs ($agent_clis) to $base_image"
  agents_layer "$agents_image"
  docker image ls --format '{{.Repository}}:{{.Tag}}' "$agents_repo" | grep -vxF "$agents_image" \
    | xargs -r docker image rm >/dev/null 2>&1 || true
fi

# Sets rootfs to the image holding variant $1's root filesystem, building its package layer when missing. A layer,
# not a debootstrap of its own: the variants share the root filesystem on disk, and apt installs a few
# dozen packages from the .deb cache in well under a minute where debootstrap takes minutes.
variant_rootfs() {
  local v=$1 vkey repo log
  rootfs=$agents_image
  [ "$v" != base ] || return 0
  vkey=$(variant_key "$v")
  repo="$base_repo-$v"
  if [ "$refresh" = true ] || ! docker image inspect "$repo:$vkey" >/dev/null 2>&1; then
    find_mirrors
    log="$cache_dir/variant-$v.log"
    step "installing $(variant_packages "$v") on $agents_image"
    mkdir -p "$cache_dir/debs"
    # The host's network, for the mirror only and during the build only: the image runs with none.
    container=$(docker create --network host -v "$cache_dir/debs:/var/cache/apt/archives" \
      --entrypoint bash "$agents_image" \
      -c "set -euo pipefail; $(declare -f install_variant_packages); install_variant_packages \"\$@\"" \
      install "$SUITE" "$mirror" "$security" $(variant_packages "$v"))
    docker start -a "$container" >"$log" 2>&1 \
      || { tail -n 20 "$log" >&2; die "installing the $v packages failed (log: $log)"; }
    docker commit --change 'ENTRYPOINT []' --change 'CMD ["/bin/bash"]' \
      --message "spb-agent $v packages $vkey" "$container" "$repo:$vkey" >/dev/null
    docker rm "$container" >/dev/null
    container=""
    docker image ls --format '{{.Repository}}:{{.Tag}}' "$repo" | grep -vxF "$repo:$vkey" \
      | xargs -r docker image rm >/dev/null 2>&1 || true
  fi
  rootfs="$repo:$vkey"
}

# Commits variant $1's image: its root filesystem plus the entrypoint, the agent jar and the agent user.
commit_agent_image() {
  local v=$1 image inputs previous rootfs
  image=$(variant_image "$v")
  inputs=$(inputs_hash "$v")
  variant_rootfs "$v"
  previous=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
  step "adding the entrypoint and the agent jar, committing $image"
  # Never started: the container only carries the entrypoint and the jar into a new layer.
  container=$(docker create --network none "$rootfs" /usr/local/bin/spb-agent)
  layer=$(mktemp -d "$cache_dir/layer.XXXXXX")
  install -d -m 0755 "$layer/opt/spb" "$layer/usr/local/bin"
  install -m 0755 "$here/spb-agent" "$layer/usr/local/bin/spb-agent"
  install -m 0644 "$agent_jar" "$layer/opt/spb/agent.jar"
  # Only these entries: a directory entry for an existing /usr or /opt would reset its owner and mode.
  tar -C "$layer" --owner=0 --group=0 --numeric-owner --no-recursion \
    -c opt/spb opt/spb/agent.jar usr/local/bin/spb-agent | docker cp - "$container:/"
  add_agent_user "$container" "$layer"
  # The account files keep the owners and modes they have in the root filesystem (shadow is root:shadow).
  tar -C "$layer" --numeric-owner --no-recursion -c etc/passwd etc/group etc/shadow etc/gshadow \
    | docker cp - "$container:/"
  docker commit \
    --change "USER $AGENT_UID:$AGENT_UID" \
    --change 'WORKDIR /work' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV HOME=/work/home' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENTRYPOINT ["/usr/local/bin/spb-agent"]' \
    --change 'CMD []' \
    --change "LABEL spb.agent.inputs=$inputs" \
    --change "LABEL spb.agent.rootfs=${rootfs##*:}" \
    --change "LABEL spb.agent.uid=$AGENT_UID" \
    --change "LABEL spb.agent.variant=$v" \
    --change "LABEL spb.agent.clis=$agent_clis" \
    --message "spb-agent $v inputs $inputs" \
    "$container" "$image" >/dev/null
  docker rm "$container" >/dev/null
  container=""
  rm -rf --one-file-system "$layer"
  layer=""
  if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect --format '{{.Id}}' "$image")" ]; then
    # Each build makes a new image; drop the one it replaced (kept while a container uses it).
    docker image rm "$previous" >/dev/null 2>&1 || true
  fi
  step "built $image (inputs ${inputs:0:12}, rootfs ${rootfs##*:}) after $((SECONDS - started)) s"
}

for v in "${variants[@]}"; do
  commit_agent_image "$v"
done
