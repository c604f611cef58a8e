#!/usr/bin/env bash
# Makes random NATS passwords for the gateway and runner roles, for trying the two-node layout.
# Keeps passwords that already exist (delete a file to replace it).
#
# usage: docker/compose/gen-nats-passwords.sh
#
# environment:
#   SPB_SECRETS_DIR   where to write (docker/compose/secrets):
#     passwords.conf    GATEWAY_PASSWORD and RUNNER_PASSWORD for nats-server, bcrypt-hashed when
#                       htpasswd (apache2-utils) is installed (owner SPB_NATS_UID, 0400)
#     gateway.password  the gateway's (owner SPB_GATEWAY_UID, 0400): SPB_NATS_PASSWORD_FILE
#     runner.password   the runners' (root, 0400): copy it to every runner node
#   SPB_NATS_UID      uid of the nats container (4222 in spbgit/nats)
#   SPB_GATEWAY_UID   uid of the gateway container (10001 in spbgit/gateway)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${SPB_SECRETS_DIR:-$here/secrets}
nats_uid=${SPB_NATS_UID:-4222}
gateway_uid=${SPB_GATEWAY_UID:-10001}

die() { echo "gen-nats-passwords.sh: $*" >&2; exit 1; }
[ $# -eq 0 ] || die "takes no arguments"
command -v openssl >/dev/null 2>&1 || die "openssl is not installed"
[ "$(id -u)" -eq 0 ] || die "must run as root (the files are owned by the containers' users)"

mkdir -p "$dir"
chmod 0755 "$dir"
umask 077
for role in gateway runner; do
  [ -s "$dir/$role.password" ] || openssl rand -hex 24 >"$dir/$role.password"
done
chown "$gateway_uid:$gateway_uid" "$dir/gateway.password"
chown 0:0 "$dir/runner.password"
chmod 0400 "$dir/gateway.password" "$dir/runner.password"
# What nats-server stores: a bcrypt hash when htpasswd (apache2-utils) is there, else the password itself
# (nats-server then warns "Plaintext passwords detected"). nats-server 2.9 knows only the $2a$ prefix;
# the hash is the same. Hex passwords: nothing to escape.
stored() {
  if command -v htpasswd >/dev/null 2>&1; then
    htpasswd -inBC 11 "" <"$1" | tr -d ':\n' | sed 's/^\$2[by]\$/$2a$/'
  else
    cat "$1"
  fi
}
printf 'GATEWAY_PASSWORD: "%s"\nRUNNER_PASSWORD: "%s"\n' \
  "$(stored "$dir/gateway.password")" "$(stored "$dir/runner.password")" >"$dir/passwords.conf.tmp"
chown "$nats_uid:$nats_uid" "$dir/passwords.conf.tmp"
chmod 0400 "$dir/passwords.conf.tmp"
mv "$dir/passwords.conf.tmp" "$dir/passwords.conf"
echo "[gen-nats-passwords] $dir: passwords.conf, gateway.password, runner.password"
