#!/usr/bin/env bash
# scripts/kafka-broker.sh start|stop|status [--port P] [--dir D]
# A real single-node Apache Kafka broker (3.9, KRaft, no ZooKeeper) on 127.0.0.1 for trying Weir
# by hand; the same code the tests use (test-services: KafkaBroker, KafkaBrokerCli).
#   start    starts the broker in the background on port P (default 9092; 0 = any free port),
#            data and broker.log in D, and prints its bootstrap address; fails naming the address
#            or the directory when it cannot start within 60 s
#   stop     stops the broker started from D (SIGTERM, then SIGKILL after 30 s)
#   status   exit 0 and the address when the broker of D runs, exit 1 when not
# D defaults to test-services/target/kafka-broker/cli (removed by `mvn clean`).
# Builds test-services first when it is missing (Maven, offline when ~/.m2 has what it needs).
# JAVA (env) names the java executable; default: java on PATH.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/test-service.sh"
run_test_service kafka-broker.sh KafkaBrokerCli kafka-broker org.apache.kafka "$@"
