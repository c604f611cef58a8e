#!/usr/bin/env bash
# Makes a throwaway CA and a NATS server certificate with openssl, for trying the two-node layout.
# Not for production: the CA key sits next to the certificates, unprotected, and nothing revokes them.
#
# usage: docker/compose/gen-nats-tls.sh [--force] [NAME|IP ...]
#   NAME|IP  extra subject alternative names: the name or address the runner nodes use to reach NATS
#            (nats, localhost and 127.0.0.1 are always included)
#   --force  replace existing files
#
# environment:
#   SPB_SECRETS_DIR  where to write (docker/compose/secrets); files go to its tls/ folder:
#                    ca.pem (give it to every client: SPB_NATS_CA), ca-key.pem, server.pem, server-key.pem
#   SPB_NATS_UID     owner of server-key.pem, the uid the nats container runs as (4222 in spbgit/nats)
#   SPB_TLS_DAYS     validity in days (90)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${SPB_SECRETS_DIR:-$here/secrets}/tls
nats_uid=${SPB_NATS_UID:-4222}
days=${SPB_TLS_DAYS:-90}
force=false
names=(nats localhost)
ips=(127.0.0.1)

die() { echo "gen-nats-tls.sh: $*" >&2; exit 1; }

for arg in "$@"; do
  case "$arg" in
    --force) force=true ;;
    -*) die "unknown option '$arg' (usage: gen-nats-tls.sh [--force] [NAME|IP ...])" ;;
    *[!0-9.]*) if [[ "$arg" == *:* ]]; then ips+=("$arg"); else names+=("$arg"); fi ;;
    *) ips+=("$arg") ;;
  esac
done
command -v openssl >/dev/null 2>&1 || die "openssl is not installed"
if [ -e "$dir/server.pem" ] && [ "$force" != true ]; then
  die "$dir/server.pem exists (use --force to replace it)"
fi

san=""
for n in "${names[@]}"; do san+="${san:+,}DNS:$n"; done
for i in "${ips[@]}"; do san+="${san:+,}IP:$i"; done

mkdir -p "$dir"
chmod 0755 "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
umask 077

openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/ca-key.pem"
openssl req -x509 -new -key "$tmp/ca-key.pem" -sha256 -days "$days" -subj "/CN=spbgit throwaway NATS CA" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out "$tmp/ca.pem" 2>/dev/null

openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/server-key.pem"
openssl req -new -key "$tmp/server-key.pem" -subj "/CN=${names[2]:-nats}" -out "$tmp/server.csr" 2>/dev/null
printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
  "extendedKeyUsage=serverAuth" "subjectAltName=$san" >"$tmp/server.ext"
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca-key.pem" -CAcreateserial \
  -days "$days" -sha256 -extfile "$tmp/server.ext" -out "$tmp/server.pem" 2>/dev/null

install -m 0644 "$tmp/ca.pem" "$dir/ca.pem"
install -m 0600 "$tmp/ca-key.pem" "$dir/ca-key.pem"
install -m 0644 "$tmp/server.pem" "$dir/server.pem"
# Readable by the nats container's user only.
install -m 0400 -o "$nats_uid" -g "$nats_uid" "$tmp/server-key.pem" "$dir/server-key.pem" 2>/dev/null \
  || { install -m 0400 "$tmp/server-key.pem" "$dir/server-key.pem"
       echo "gen-nats-tls.sh: warning: cannot chown server-key.pem to $nats_uid (not root?); the nats container cannot read it" >&2; }
echo "[gen-nats-tls] $dir: ca.pem, server.pem ($san), valid $days days"
