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

source "$(dirname "${BASH_SOURCE[0]}")/test-service.sh"
run_test_service zookeeper.sh ZooKeeperCli zookeeper org.apache.zookeeper "$@"
