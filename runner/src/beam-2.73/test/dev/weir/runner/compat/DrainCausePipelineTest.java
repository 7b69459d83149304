package dev.weir.runner.compat;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.values.CausedByDrain;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.WindowedValue;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Beam 2.73's drain cause on Weir for Beam 2.73 (this test is compiled in that build only): a
 * DoFn taking {@link CausedByDrain} in {@code @ProcessElement} and {@code @OnTimer} runs, and sees
 * {@code NORMAL} for elements and timers of a job that is not draining; in a drained job, the timers
 * the drain fires and the panes it closes are {@code CAUSED_BY_DRAIN}; a timer fired with a drain
 * cause reaches runners-core's {@code onTimer} as {@code CAUSED_BY_DRAIN}.
 */
class DrainCausePipelineTest {
  /** Emits, per key, the cause seen by its element and by its end-of-window timer. */
  static final class ReportCauseFn extends DoFn<KV<String, Integer>, String> {
    @StateId("seen")
    private final StateSpec<ValueState<Integer>> seenSpec = StateSpecs.value(VarIntCoder.of());

    @TimerId("end")
    private final TimerSpec endSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(@Element KV<String, Integer> element, CausedByDrain cause, BoundedWindow window,
        @StateId("seen") ValueState<Integer> seen, @TimerId("end") Timer end, OutputReceiver<String> out) {
      seen.write(element.getValue());
      end.set(window.maxTimestamp());
      out.output("element " + element.getKey() + " " + cause);
    }

    @OnTimer("end")
    public void onEnd(@Key String key, CausedByDrain cause, OutputReceiver<String> out) {
      out.output("timer " + key + " " + cause);
    }
  }

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aDoFnSeesNormalForElementsAndTimersOfAJobThatIsNotDraining(boolean streaming) {
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=TestWeirRunner",
        "--streaming=" + streaming, "--parallelism=2", "--containers=2", "--stateBackend=MEMORY").create());
    PCollection<String> out = p.apply(Create.of(KV.of("a", 1), KV.of("b", 2)))
        .apply(ParDo.of(new ReportCauseFn()));
    PAssert.that(out).containsInAnyOrder(
        "element a NORMAL", "element b NORMAL", "timer a NORMAL", "timer b NORMAL");
    assertThat(p.run().waitUntilFinish()).isEqualTo(PipelineResult.State.DONE);
  }

  static final List<String> SEEN = java.util.Collections.synchronizedList(new ArrayList<>());
  static final java.util.concurrent.atomic.AtomicLong ELEMENTS = new java.util.concurrent.atomic.AtomicLong();

  /** Per key, a timer at the end of the global window (only a drain gets there); records its cause. */
  static final class TimerAtTheEndFn extends DoFn<KV<Long, Long>, Void> {
    @TimerId("end")
    private final TimerSpec endSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(BoundedWindow window, CausedByDrain cause, @TimerId("end") Timer end) {
      end.set(window.maxTimestamp());
      ELEMENTS.incrementAndGet();
      if (cause != CausedByDrain.NORMAL) {
        SEEN.add("element " + cause);
      }
    }

    @OnTimer("end")
    public void onEnd(@Key Long key, CausedByDrain cause) {
      SEEN.add("timer " + key + " " + cause);
    }
  }

  /** Records the cause of each pane it receives. */
  static final class RecordPaneCauseFn extends DoFn<KV<Long, Long>, Void> {
    @ProcessElement
    public void process(@Element KV<Long, Long> count, CausedByDrain cause) {
      SEEN.add("pane " + count.getKey() + " " + cause);
    }
  }

  @Test
  void aDrainedJobsTimersAndThePanesTheDrainCloses_areCausedByDrain() throws Exception {
    SEEN.clear();
    ELEMENTS.set(0);
    Pipeline p = Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--streaming=true",
        "--parallelism=2", "--containers=2", "--stateBackend=MEMORY").create());
    PCollection<KV<Long, Long>> keyed = p.apply(org.apache.beam.sdk.io.GenerateSequence.from(0)
            .withRate(2000, org.joda.time.Duration.standardSeconds(1)))
        .apply(org.apache.beam.sdk.transforms.WithKeys.of((Long n) -> n % 3)
            .withKeyType(org.apache.beam.sdk.values.TypeDescriptors.longs()));
    keyed.apply("Timers", ParDo.of(new TimerAtTheEndFn()));
    keyed.apply(org.apache.beam.sdk.transforms.windowing.Window.<KV<Long, Long>>into(
                new org.apache.beam.sdk.transforms.windowing.GlobalWindows())
            .triggering(org.apache.beam.sdk.transforms.windowing.AfterWatermark.pastEndOfWindow())
            .discardingFiredPanes())
        .apply(org.apache.beam.sdk.transforms.Count.perKey())
        .apply("Panes", ParDo.of(new RecordPaneCauseFn()));
    dev.weir.runner.WeirPipelineResult result = (dev.weir.runner.WeirPipelineResult) p.run();
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (ELEMENTS.get() < 100 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(SEEN).as("nothing fired before the drain").isEmpty();
    result.drain();
    assertThat(result.waitUntilFinish(org.joda.time.Duration.standardMinutes(1))).isEqualTo(PipelineResult.State.DONE);
    assertThat(SEEN).containsExactlyInAnyOrder(
        "timer 0 CAUSED_BY_DRAIN", "timer 1 CAUSED_BY_DRAIN", "timer 2 CAUSED_BY_DRAIN",
        "pane 0 CAUSED_BY_DRAIN", "pane 1 CAUSED_BY_DRAIN", "pane 2 CAUSED_BY_DRAIN");
  }

  @Test
  void aDrainCauseReachesRunnersCoreAsCausedByDrain() {
    List<CausedByDrain> seen = new ArrayList<>();
    DoFnRunner<Object, Object> runner = new TimerForwardingRunner<>() {
      @Override
      protected <KeyT> void fireTimer(String timerId, String timerFamilyId, KeyT key, BoundedWindow window,
          Instant timestamp, Instant outputTimestamp, TimeDomain timeDomain, boolean causedByDrain) {
        seen.add(causedByDrain ? CausedByDrain.CAUSED_BY_DRAIN : CausedByDrain.NORMAL);
      }

      @Override
      public DoFn<Object, Object> getFn() {
        throw new UnsupportedOperationException();
      }

      @Override
      public void startBundle() {}

      @Override
      public void processElement(WindowedValue<Object> elem) {}

      @Override
      public <KeyT> void onWindowExpiration(BoundedWindow window, Instant timestamp, KeyT key) {}

      @Override
      public void finishBundle() {}
    };
    Instant t = new Instant(0);
    BeamTimers.fire(runner, "t", "", "k", GlobalWindow.INSTANCE, t, t, TimeDomain.EVENT_TIME, true);
    BeamTimers.fire(runner, "t", "", "k", GlobalWindow.INSTANCE, t, t, TimeDomain.EVENT_TIME, false);
    assertThat(seen).containsExactly(CausedByDrain.CAUSED_BY_DRAIN, CausedByDrain.NORMAL);
  }
}
