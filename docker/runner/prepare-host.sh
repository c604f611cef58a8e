#!/usr/bin/env bash
# Prepares a runner node's host for a runner in a container (docker/compose/runner-node.yaml): makes
# SPB_RUNNER_WORK_DIR a shared mount, so the size-capped /work tmpfs the runner mounts inside its container
# propagates to the host, where the Docker engine resolves it as a job container's bind-mount source.
# It also refuses a SPB_SANDBOX_UID that is a login account of this host: the runner checks that at start-up,
# but inside its container it sees the container's accounts, not the host's, which job containers share.
# Idempotent. Not kept across reboots: add the fstab line it prints, or run it before the runner starts.
#
# usage: docker/runner/prepare-host.sh [--undo]
#   --undo   unmount the shared bind mount again (after the runner has stopped)
#
# environment:
#   SPB_RUNNER_WORK_DIR   the runner's work directory, the same path inside and outside (/var/lib/spbgit-runner)
#   SPB_SANDBOX_UID       the uid job containers run as, the runner's setting (2000000000)
set -euo pipefail

dir=${SPB_RUNNER_WORK_DIR:-/var/lib/spbgit-runner}
sandbox_uid=${SPB_SANDBOX_UID:-2000000000}
die() { echo "prepare-host.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (mount)"
case "$dir" in /*) ;; *) die "SPB_RUNNER_WORK_DIR must be an absolute path, got '$dir'" ;; esac

if [ "${1:-}" = --undo ]; then
  if mountpoint -q "$dir"; then
    # Job tmpfs left below it (a runner that died) go first, lazily.
    findmnt -rn -o TARGET | awk -v d="$dir/" 'index($0, d) == 1' | sort -r | xargs -r -n1 umount -l
    umount -l "$dir"
  fi
  echo "[prepare-host] $dir is no longer a mount point"
  exit 0
fi
[ $# -eq 0 ] || die "unknown argument '$1' (usage: prepare-host.sh [--undo])"

# The runner's own rule (SandboxUidCheck, docs/sandbox.md): no root, no account someone can log in as.
[[ "$sandbox_uid" =~ ^[1-9][0-9]{0,9}$ ]] && [ "$sandbox_uid" -le 2147483647 ] \
  || die "SPB_SANDBOX_UID must be a uid from 1 to 2147483647 (never root), got '$sandbox_uid'"
{ awk -F: -v uid="$sandbox_uid" '$3 == uid' /etc/passwd 2>/dev/null; getent passwd "$sandbox_uid" || true; } \
  | while IFS=: read -r name _ _ _ _ _ shell; do
    case "${shell:-/bin/sh}" in
      */nologin | */false | */true | */sync | */halt | */shutdown) ;;
      *) die "SPB_SANDBOX_UID=$sandbox_uid is the uid of the login account '$name' (shell ${shell:-/bin/sh}) on this host: set SPB_SANDBOX_UID to a uid no login account has (docs/sandbox.md)" ;;
    esac
  done
echo "[prepare-host] SPB_SANDBOX_UID=$sandbox_uid is no login account of this host"

# 0700: only root on this host reaches the jobs' egress sockets; each job sees only its own mounted part.
install -d -m 0700 "$dir"
# --rbind: tmpfs of jobs a runner on the host may have mounted below it stay visible.
mountpoint -q "$dir" || mount --rbind "$dir" "$dir"
[ "$(findmnt -n -o PROPAGATION --target "$dir" | head -n1)" = shared ] || mount --make-shared "$dir"
echo "[prepare-host] $dir: $(findmnt -n -o PROPAGATION --target "$dir" | head -n1) mount"
echo "[prepare-host] to keep it across reboots, add to /etc/fstab:"
echo "  $dir $dir none bind,shared 0 0"
