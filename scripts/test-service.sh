# scripts/test-service.sh: what scripts/kafka-broker.sh and scripts/zookeeper.sh share; sourced,
# not run. run_test_service SCRIPT CLI_CLASS DIR_NAME QUIET_LOGGER ARGS... builds test-services
# when it is missing (Maven, offline when ~/.m2 has what it needs), then runs the service's
# command line (test-services' ServiceCli) with --dir test-services/target/DIR_NAME/cli unless
# ARGS give one, and with QUIET_LOGGER's logging at error. JAVA (env) names the java executable;
# default: java on PATH.

run_test_service() {
  local script="$1" cli="$2" dir_name="$3" quiet_logger="$4"
  shift 4
  local root module classes cp_file java
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  module="$root/test-services"
  classes="$module/target/classes"
  # the Kafka broker's resolved classpath (it also holds the ZooKeeper 3.8.4 server jars)
  cp_file="$classes/dev/weir/testservices/kafka-broker.classpath"
  java="${JAVA:-java}"

  if [[ ! -f "$cp_file" || ! -f "$classes/dev/weir/testservices/$cli.class" ]]; then
    echo "$script: building test-services (log: $module/target/build.log)" >&2
    mkdir -p "$module/target"
    (cd "$root" && { mvn -B -q -o -pl test-services compile > "$module/target/build.log" 2>&1 \
      || mvn -B -q -pl test-services compile > "$module/target/build.log" 2>&1; }) \
      || { echo "$script: the build failed; see $module/target/build.log" >&2; exit 2; }
  fi

  local args=("$@") has_dir=0 a
  for a in "$@"; do
    case "$a" in --dir|--dir=*) has_dir=1 ;; esac
  done
  if [[ $has_dir == 0 ]]; then
    args+=(--dir "$module/target/$dir_name/cli")
  fi

  exec "$java" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn "-Dorg.slf4j.simpleLogger.log.$quiet_logger=error" \
    -cp "$classes:$(cat "$cp_file")" "dev.weir.testservices.$cli" "${args[@]}"
}
