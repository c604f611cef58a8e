#!/bin/sh
# Probes the sandbox from inside a job container. Prints "PROBE name=reachable|blocked" (or a value).
# Every target is on the runner's own machine, named by the test through the environment.
probe() {
  name=$1; shift
  if "$@" >/dev/null 2>&1; then echo "PROBE $name=reachable"; else echo "PROBE $name=blocked"; fi
}
# curl exits 0 only when it got a 2xx answer from the target.
fetch() { curl -fsS --max-time 5 "$@"; }

probe write_root touch /probe-file
probe write_etc touch /etc/probe-file
probe write_usr_bin sh -c 'echo x > /usr/local/bin/probe-file'
probe write_work touch /work/probe-file
probe gateway_api fetch "$GATEWAY/api/v1/repos"
probe gateway_api_direct fetch --noproxy '*' "$GATEWAY/api/v1/repos"
probe relay_api fetch --noproxy '*' "http://127.0.0.1:3130/api/v1/repos"
probe relay_own_repo git ls-remote "$SPB_CLONE_URL"
probe relay_other_repo git ls-remote "http://127.0.0.1:3130/other.git"
probe job_token sh -c 'cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" "\n" | grep -q -e "SPB_JOB_TOKE[N]" -e "^eyJ"'

probe loopback_via_proxy fetch "http://$LOOP/"
probe loopback_direct fetch --noproxy '*' "http://$LOOP/"
probe host_via_proxy fetch "http://$HOST/"
probe host_direct fetch --noproxy '*' "http://$HOST/"
probe host_noproxy_env env NO_PROXY='*' no_proxy='*' curl -fsS --max-time 5 "http://$HOST/"
probe nats_via_proxy fetch "http://$NATS/"
probe nats_connect_tunnel fetch -p "http://$NATS/"
gw_host_port=${GATEWAY#http://}
gw_host=${gw_host_port%:*}
probe gateway_connect_other_port fetch -p "http://$gw_host:$(( ${NATS##*:} ))/"
if [ -n "$BRIDGE" ]; then
  probe bridge_via_proxy fetch "http://$BRIDGE/"
  probe bridge_direct fetch --noproxy '*' "http://$BRIDGE/"
fi
probe dns_lookup getent hosts probe.spbgit.test
if [ -n "$V6" ]; then
  probe ipv6_direct fetch -g --noproxy '*' "http://$V6/"
  probe ipv6_via_proxy fetch -g "http://$V6/"
else
  probe ipv6_direct fetch -g --noproxy '*' "http://[::1]:9/"
  probe ipv6_via_proxy fetch -g "http://[::1]:9/"
fi

probe unshare_user unshare -Ur true
probe unshare_net unshare -n true
probe mount_tmpfs mount -t tmpfs none /tmp
probe docker_socket test -e /var/run/docker.sock
probe read_host_proc sh -c 'cat /proc/1/environ | grep -q SPB_NATS'
probe setuid_su su -c true root

echo "PROBE cap_eff=$(awk '/^CapEff/ {print $2}' /proc/self/status)"
echo "PROBE uid=$(id -u)"
echo "PROBE env_keys=$(env | cut -d= -f1 | sort | tr '\n' ',' | sed 's/,$//')"
