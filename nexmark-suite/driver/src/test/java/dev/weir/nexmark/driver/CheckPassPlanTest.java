// Role: unit tests of the check pass as the driver plans, passes and reads it: which runs get one
// (Direct's events, not Direct, bare, Q10 or Q12, not with --no-check-pass), the child's
// --checkEvents option, and perf-check.json read into checkEvents/checkResults.
// Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckPassPlanTest {
  @TempDir Path tmp;

  @Test
  void theDefaultCommandChecksFlinkAndWeirAtDirectsEventsOnEveryComparableQuery() {
    NexmarkCommand cmd = new NexmarkCommand();
    new picocli.CommandLine(cmd).parseArgs();
    List<RunSpec> plan = cmd.plan();
    assertThat(plan).filteredOn(s -> s.runner() == RunnerKind.FLINK || s.runner() == RunnerKind.WEIR)
        .allSatisfy(s -> assertThat(s.checkEvents()).as("%s Q%d", s.runner(), s.query())
            .isEqualTo(s.query() == 10 || s.query() == 12 ? 0 : 10_000));
    assertThat(plan).filteredOn(s -> s.runner() == RunnerKind.DIRECT || s.runner() == RunnerKind.BARE)
        .extracting(RunSpec::checkEvents).containsOnly(0L);
  }

  @Test
  void noCheckPassWithoutDirectAtAnotherSizeOrWhenSwitchedOff() {
    NexmarkCommand noDirect = new NexmarkCommand();
    new picocli.CommandLine(noDirect).parseArgs("--runners", "flink,weir", "--queries", "0-2");
    assertThat(noDirect.plan()).extracting(RunSpec::checkEvents).containsOnly(0L);

    NexmarkCommand sameSize = new NexmarkCommand();
    new picocli.CommandLine(sameSize).parseArgs("--runners", "direct,weir", "--queries", "3", "--events", "20000");
    assertThat(sameSize.plan()).extracting(RunSpec::checkEvents).containsOnly(0L);

    NexmarkCommand off = new NexmarkCommand();
    new picocli.CommandLine(off).parseArgs("--no-check-pass");
    assertThat(off.plan()).extracting(RunSpec::checkEvents).containsOnly(0L);
  }

  @Test
  void eachSweepPointAndRepeatIsCheckedAgainstItsOwnDirectRun() {
    NexmarkCommand cmd = new NexmarkCommand();
    new picocli.CommandLine(cmd).parseArgs("--runners", "direct,weir", "--queries", "5",
        "--events", "100000,direct=2000", "--repeat", "2", "--sweep", "maxBundleSize=10,100");
    assertThat(cmd.plan()).filteredOn(s -> s.runner() == RunnerKind.WEIR).hasSize(4)
        .extracting(RunSpec::checkEvents).containsOnly(2_000L);
  }

  @Test
  void theChildGetsCheckEventsOnlyWithACheckPass() {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null);
    RunSpec plain = new RunSpec(RunnerKind.WEIR, 3, "streaming", 500_000, Map.of(), 1, 300_000, 10, 30, 5);
    assertThat(cr.options(plain, tmp.resolve("run"))).doesNotContainKey("checkEvents");
    assertThat(cr.options(plain.withCheckEvents(10_000), tmp.resolve("run")))
        .containsEntry("checkEvents", "10000").containsEntry("numEvents", "500000");
  }

  @Test
  void theCheckPassPerfFileGivesItsEventsAndResultCount() throws Exception {
    ChildRun cr = new ChildRun(new SuiteLayout(tmp), 2, 10, List.of(), false, null);
    RunSpec spec = new RunSpec(RunnerKind.WEIR, 3, "streaming", 500_000, Map.of(), 1, 300_000, 10, 30, 5)
        .withCheckEvents(10_000);
    Path perf = tmp.resolve("perf-check.json");
    Files.writeString(perf, "# Nexmark perf\n{\"numEvents\":10000,\"runtimeSec\":0.5,\"eventsPerSec\":20000.0,"
        + "\"numResults\":27,\"resultsPerSec\":54.0,\"errors\":[]}\n");
    RunRecord r = new RunRecord();
    cr.readCheckPass(r, spec, perf);
    assertThat(r.checkEvents).isEqualTo(10_000L);
    assertThat(r.checkResults).isEqualTo(27L);

    // Nexmark reports -1 when the query emitted nothing (no results counter): zero results.
    Files.writeString(perf, "{\"numEvents\":10000,\"runtimeSec\":0.5,\"eventsPerSec\":20000.0,"
        + "\"numResults\":-1,\"resultsPerSec\":-1.0,\"errors\":[]}\n");
    RunRecord none = new RunRecord();
    cr.readCheckPass(none, spec, perf);
    assertThat(none.checkResults).isZero();

    RunRecord missing = new RunRecord();
    cr.readCheckPass(missing, spec, tmp.resolve("absent.json"));
    assertThat(missing.checkEvents).isNull();
    assertThat(missing.checkResults).isNull();
  }
}
