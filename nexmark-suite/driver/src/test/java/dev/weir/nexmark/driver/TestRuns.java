// Role: builders of synthetic RunRecords for unit tests. Threading: stateless.
package dev.weir.nexmark.driver;

import java.util.List;

final class TestRuns {
  private TestRuns() {}

  static RunRecord ok(String runner, int query, double eventsPerSec, long results) {
    RunRecord r = base(runner, query);
    r.status = RunRecord.OK;
    r.exitStatus = 0;
    r.eventsPerSec = eventsPerSec;
    r.numResults = results;
    r.runtimeSec = r.events / eventsPerSec;
    r.resultsPerSec = results / r.runtimeSec;
    r.wallSec = r.runtimeSec + 5;
    r.cpuSeconds = 12.5;
    r.peakRssBytes = 800_000_000L;
    r.gcTimeMs = 120L;
    r.gcCount = 9L;
    // The Beam of each runner's classpath: Weir's 2.73, the others' 2.70 (classpath-* modules).
    r.beamVersion = "weir".equals(runner) ? "2.73.0" : "2.70.0";
    return r;
  }

  static RunRecord failed(String runner, int query) {
    RunRecord r = base(runner, query);
    r.status = RunRecord.FAILED;
    r.exitStatus = 1;
    r.firstErrorLine = "java.lang.UnsupportedOperationException: not yet";
    return r;
  }

  static RunRecord timeout(String runner, int query) {
    RunRecord r = base(runner, query);
    r.status = RunRecord.TIMEOUT;
    r.firstErrorLine = "timed out after 150 s; process tree killed";
    return r;
  }

  private static RunRecord base(String runner, int query) {
    RunRecord r = new RunRecord();
    r.runner = runner;
    r.query = query;
    r.queryName = QuerySet.name(query);
    r.mode = "streaming";
    r.events = 50_000;
    r.repeat = 1;
    r.correctness = "none";
    r.command = List.of("java", "-cp", "$(cat x)", RunnerKind.HARNESS_MAIN, "--query=" + query);
    return r;
  }
}
