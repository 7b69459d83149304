#!/usr/bin/env bash
# scripts/zookeeper.sh start|stop|status [--port P] [--dir D]
# A real standalone Apache ZooKeeper server (3.8.4) on 127.0.0.1 for trying Weir
# on Samza with ZooKeeper coordination by hand; the same code the tests use (test-services: ZooKeeperServer, ZooKeeperCli).
#   start    starts the server in the background on port P (default 2181; 0 = any free port),
#            data and zookeeper.log in D, and prints its connect string; fails naming the address
#            or the directory when it cannot start within 60 s
#   stop     stops the server started from D (SIGTERM, then SIGKILL after 30 s)
#   status   exit 0 and the address when the server of D runs, exit 1 when not
# D defaults to test-services/target/zookeeper/cli (removed by `mvn clean`).
# Builds test-services first when it is missing (Maven, offline when ~/.m2 has what it needs).
# JAVA (env) names the java executable; default: java on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="$ROOT/test-services"
CLASSES="$MODULE/target/classes"
# the Kafka broker's resolved classpath, which holds the ZooKeeper 3.8.4 server jars (ZooKeeperServer)
CP_FILE="$CLASSES/dev/weir/testservices/kafka-broker.classpath"
JAVA="${JAVA:-java}"

if [[ ! -f "$CP_FILE" || ! -f "$CLASSES/dev/weir/testservices/ZooKeeperCli.class" ]]; then
  echo "zookeeper.sh: building test-services (log: $MODULE/target/build.log)" >&2
  mkdir -p "$MODULE/target"
  (cd "$ROOT" && { mvn -B -q -o -pl test-services compile > "$MODULE/target/build.log" 2>&1 \
    || mvn -B -q -pl test-services compile > "$MODULE/target/build.log" 2>&1; }) \
    || { echo "zookeeper.sh: the build failed; see $MODULE/target/build.log" >&2; exit 2; }
fi

ARGS=("$@")
HAS_DIR=0
for a in "$@"; do
  case "$a" in --dir|--dir=*) HAS_DIR=1 ;; esac
done
if [[ $HAS_DIR == 0 ]]; then
  ARGS+=(--dir "$MODULE/target/zookeeper/cli")
fi

exec "$JAVA" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.org.apache.zookeeper=error \
  -cp "$CLASSES:$(cat "$CP_FILE")" dev.weir.testservices.ZooKeeperCli "${ARGS[@]}"
