#!/bin/sh
# System benchmarks of the whole job path (gateway, NATS, runner, Docker, websocket viewers), each measuring
# its baseline in the same run. They are test-scoped classes of this module
# (ai.spboucher.spbgit.benchmarks.system.*Benchmark, on the runner's and the gateway's test jars), run here with
# plain `java -cp` so no test runner picks them up.
#
#   benchmarks/system-benchmarks.sh                     # every benchmark, default sizes
#   benchmarks/system-benchmarks.sh Dispatch --runs 3   # one benchmark (class name without "Benchmark"), options
#
# Needs what the integration tests need: the Docker engine with spbgit/agent:latest, nats-server, git, root
# (the runner mounts each job's /work). Results: benchmarks/target/sysbench/<name>.txt.
# Extra JVM options: SPB_BENCH_GATEWAY_JVM / SPB_BENCH_RUNNER_JVM (e.g. -XX:StartFlightRecording=...);
# SPB_BENCH_GATEWAY_JAVA: the JDK home to run the gateway with (default: the one running the benchmark).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cp_file=benchmarks/target/sysbench-classpath.txt

echo "building the test classpath (offline)..." >&2
# The reactor resolves proto, hooks, the gateway and the runner (and their test classes) to their target
# directories, so nothing has to be installed; the dependency plugin version is one that resolves offline.
mvn -B -o -q -pl benchmarks -am test-compile \
  org.apache.maven.plugins:maven-dependency-plugin:2.8:build-classpath \
  -Dmdep.outputFile="$root/$cp_file" -Dmdep.includeScope=test
classpath="$root/benchmarks/target/test-classes:$root/benchmarks/target/classes:$(cat "$cp_file")"

run() {
  name=$1
  shift
  echo "=== ${name}Benchmark $*" >&2
  (cd benchmarks && java -Xmx1g \
    -Dspb.bench.gatewayJvm="${SPB_BENCH_GATEWAY_JVM:-}" -Dspb.bench.runnerJvm="${SPB_BENCH_RUNNER_JVM:-}" \
    -Dspb.bench.gatewayJava="${SPB_BENCH_GATEWAY_JAVA:-}" \
    -cp "$classpath" "ai.spboucher.spbgit.benchmarks.system.${name}Benchmark" "$@")
}

if [ $# -gt 0 ]; then
  run "$@"
else
  for name in PublishLatency Dispatch LogLatency LogThroughput FanOut Queue Environment; do
    run "$name"
  done
fi
