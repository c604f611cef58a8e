#!/bin/sh
# System benchmarks of the whole job path (gateway, NATS, runner, Docker, websocket viewers), each measuring
# its baseline in the same run. They are test-scoped classes of runner-verticle
# (ai.spboucher.spbgit.runner.bench.*Benchmark), run here with plain `java -cp` so no test runner picks them up.
#
#   benchmarks/system-benchmarks.sh                     # every benchmark, default sizes
#   benchmarks/system-benchmarks.sh Dispatch --runs 3   # one benchmark (class name without "Benchmark"), options
#
# Needs what the integration tests need: the Docker engine with spbgit/agent:latest, nats-server, git, root
# (the runner mounts each job's /work). Results: runner-verticle/target/sysbench/<name>.txt.
# Extra JVM options: SPB_BENCH_GATEWAY_JVM / SPB_BENCH_RUNNER_JVM (e.g. -XX:StartFlightRecording=...);
# SPB_BENCH_GATEWAY_JAVA: the JDK home to run the gateway with (default: the one running the benchmark).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cp_file=runner-verticle/target/sysbench-classpath.txt

echo "building the test classpath (offline)..." >&2
# The reactor resolves proto, hooks and the gateway (and its test classes) to their target directories, so
# nothing has to be installed; the dependency plugin version is one that resolves offline.
mvn -B -o -q -pl runner-verticle -am test-compile \
  org.apache.maven.plugins:maven-dependency-plugin:2.8:build-classpath \
  -Dmdep.outputFile="$root/$cp_file" -Dmdep.includeScope=test
classpath="$root/runner-verticle/target/test-classes:$root/runner-verticle/target/classes:$(cat "$cp_file")"

run() {
  name=$1
  shift
  echo "=== ${name}Benchmark $*" >&2
  (cd runner-verticle && java -Xmx1g \
    -Dspb.bench.gatewayJvm="${SPB_BENCH_GATEWAY_JVM:-}" -Dspb.bench.runnerJvm="${SPB_BENCH_RUNNER_JVM:-}" \
    -Dspb.bench.gatewayJava="${SPB_BENCH_GATEWAY_JAVA:-}" \
    -cp "$classpath" "ai.spboucher.spbgit.runner.bench.${name}Benchmark" "$@")
}

if [ $# -gt 0 ]; then
  run "$@"
else
  for name in PublishLatency Dispatch LogLatency LogThroughput FanOut Queue Environment; do
    run "$name"
  done
fi
