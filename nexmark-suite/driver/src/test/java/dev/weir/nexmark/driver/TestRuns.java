// Role: builders of synthetic RunRecords for unit tests. Threading: stateless.
package dev.weir.nexmark.driver;

import java.util.List;

final class TestRuns {
  private TestRuns() {}

  /**
   * A results document of {@code runs} as the driver writes it (Q0 and Q3, streaming, 50,000
   * events, this machine's and JVM's facts) with its summary over {@code runners}, in that order.
   */
  static ResultsDocument document(List<RunRecord> runs, List<String> runners) {
    ResultsDocument d = new ResultsDocument();
    d.startedAt = "2026-11-21T06:00:00Z";
    d.finishedAt = "2026-11-21T06:15:00Z";
    d.settings.put("runners", runners);
    d.settings.put("queries", List.of(0, 3));
    d.settings.put("modes", List.of("streaming"));
    d.settings.put("events", 50_000);
    d.settings.put("timeoutPerRunSec", 150);
    d.machine = ResultsDocument.machineFacts();
    d.jvm = ResultsDocument.jvmFacts();
    d.runs.addAll(runs);
    d.summary = Summary.of(runs, runners);
    return d;
  }

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
