package dev.weir.runner.task;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.WeirRunner;
import dev.weir.runner.WeirSettings;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.operators.FailureContext;
import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.StagePlan;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.memory.InMemoryStorage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One task hosted by a foreign run loop, as samza-core hosts it in runner-samza, driven by the test
 * as that host would: envelopes in through {@link HostedTask#process}, the end of input, the
 * commit point, and what the task sends out through its {@link HostedTask.Output}.
 *
 * <p>The job: {@code Create -> GroupByKey -> count per key -> GroupByKey}; the hosted task is the
 * first GroupByKey's (its stage writes to the second shuffle's stream).
 */
class HostedTaskTest {
  private record Sent(String stream, int partition, byte[] key, Object message) {}

  private final List<Sent> sent = new ArrayList<>();
  private final HostedTask.Output out = (stream, partition, key, message) ->
      sent.add(new Sent(stream.name(), partition, key, message));
  private HostedTask task;
  private int input;
  private int producers;

  /** Emits each key's element count; fails on the key "boom". */
  static final class CountPerKey extends DoFn<KV<String, Iterable<Long>>, KV<String, Long>> {
    @ProcessElement
    public void process(@Element KV<String, Iterable<Long>> group, OutputReceiver<KV<String, Long>> output) {
      if (group.getKey().equals("boom")) {
        throw new IllegalArgumentException("boom");
      }
      long n = 0;
      for (Long ignored : group.getValue()) {
        n++;
      }
      output.output(KV.of(group.getKey(), n));
    }
  }

  private JobPlan plan;
  private WeirSettings settings;
  private StagePlan grouping;

  /** A host's store that outlives the hosted task (as a Samza store does): close only forgets it. */
  private static StateStorage outliving(InMemoryStorage storage) {
    return new StateStorage() {
      @Override
      public SortedByteStore store(String name) {
        return storage.store(name);
      }

      @Override
      public Set<String> storeNames() {
        return storage.storeNames();
      }

      @Override
      public void commit(Map<String, byte[]> metadata) {
        storage.commit(metadata);
      }

      @Override
      public Map<String, byte[]> committedMetadata() {
        return storage.committedMetadata();
      }

      @Override
      public long commitSequence() {
        return storage.commitSequence();
      }

      @Override
      public long stagedBytes() {
        return storage.stagedBytes();
      }

      @Override
      public Optional<Path> directory() {
        return Optional.empty();
      }

      @Override
      public boolean isDurable() {
        return true;
      }

      @Override
      public void close() {}
    };
  }

  @BeforeEach
  void hostTheGroupingTask() throws Exception {
    WeirPipelineOptions options = PipelineOptionsFactory.fromArgs("--runner=WeirRunner", "--parallelism=1",
        "--stateBackend=MEMORY").as(WeirPipelineOptions.class);
    Pipeline p = Pipeline.create(options);
    p.apply(Create.of(KV.of("a", 1L)).withCoder(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of())))
        .apply("First", GroupByKey.create())
        .apply(ParDo.of(new CountPerKey()))
        .apply("Second", GroupByKey.create());
    settings = WeirSettings.from(options);
    plan = WeirRunner.translate(p, settings);
    grouping = plan.stages().get(1);
    task = new HostedTask(plan, JobPlan.taskName(grouping, 0), settings, new StepMetrics(), null);
    input = task.inputIndex(grouping.inputs().get(0).stream().name());
    producers = grouping.inputs().get(0).stream().producers();
    assertThat(input).isZero();
    task.open();
  }

  @AfterEach
  void close() {
    task.close();
  }

  private void element(String key, long value) throws Exception {
    WindowedValue<KV<String, Long>> element = WindowedValues.of(KV.of(key, value), BoundedWindow.TIMESTAMP_MIN_VALUE,
        GlobalWindow.INSTANCE, PaneInfo.NO_FIRING);
    task.process(input, CoderUtils.encodeToByteArray(StringUtf8Coder.of(), key), element, out);
  }

  private List<Object> messages() {
    return sent.stream().map(Sent::message).toList();
  }

  @Test
  void theEndOfInput_runsTheTaskToItsEnd_sendingEachKeysCountThenEndOfStream() throws Exception {
    element("a", 1);
    element("a", 2);
    element("b", 3);
    assertThat(task.isDone()).isFalse();

    task.endOfInput(out);

    assertThat(task.isDone()).isTrue();
    List<KV<?, ?>> counts = new ArrayList<>();
    for (Object message : messages()) {
      if (message instanceof WindowedValue<?> value) {
        counts.add((KV<?, ?>) value.getValue());
      }
    }
    assertThat(counts).containsExactlyInAnyOrder(KV.of("a", 2L), KV.of("b", 1L));
    assertThat(sent).allSatisfy(s -> assertThat(s.partition()).isZero());
    assertThat(messages().get(messages().size() - 1)).as("end of stream last").isInstanceOf(ProducerEndOfStream.class);
    assertThat(messages()).filteredOn(ProducerWatermark.class::isInstance)
        .as("the end of input's watermark went on").isNotEmpty();
    assertThatThrownBy(() -> element("c", 4)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(task.name()).hasMessageContaining("is done");
  }

  @Test
  void aCommitPointSendsNothingEarly_andAFailingDoFnNamesTheHostedTask() throws Exception {
    element("a", 1);
    task.commitState(out);
    assertThat(task.isDone()).isFalse();
    assertThat(messages()).as("a global-window GroupByKey emits nothing before its input ends")
        .noneMatch(WindowedValue.class::isInstance);

    element("boom", 1);
    assertThatThrownBy(() -> {
      for (int producer = 0; producer < producers; producer++) {
        task.process(input, null, new ProducerEndOfStream(producer, "upstream"), out); // the end fires the groups
      }
    }).satisfies(e -> {
      Throwable user = FailureContext.userCause(e);
      assertThat(user).isInstanceOf(IllegalArgumentException.class).hasMessage("boom");
      assertThat(user.getSuppressed()).anySatisfy(c -> assertThat(c).hasMessageContaining(task.name())
          .hasMessageContaining("hosted"));
    });
  }

  @Test
  void aHostStorage_keepsTheTasksHeapState_aTaskRestoredAfterItsEndDropsWhatItsProducersSendAgain()
      throws Exception {
    task.close();
    StateStorage storage = outliving(new InMemoryStorage());
    task = new HostedTask(plan, JobPlan.taskName(grouping, 0), settings, new StepMetrics(), null, storage);
    task.open();
    element("a", 1);
    assertThat(task.commitState(out)).as("a quiet task commits").isTrue();
    for (int producer = 0; producer < producers; producer++) {
      task.process(input, null, new ProducerEndOfStream(producer, "upstream"), out);
    }
    assertThat(task.isDone()).isTrue();
    assertThat(task.commitState(out)).isTrue(); // the host's last commit point, with the ended watermarks
    task.close();
    sent.clear();

    // the host restarts the task over the same store: its producers' ends come back from the commit record
    task = new HostedTask(plan, JobPlan.taskName(grouping, 0), settings, new StepMetrics(), null, storage);
    task.open();
    task.process(input, null, new ProducerWatermark(BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis(), 0, "upstream"), out);
    assertThat(task.isDone()).as("restored past its end of input, it ends again at once").isTrue();
    task.process(input, null, new ProducerEndOfStream(0, "upstream"), out);
    task.endOfInput(out);
    assertThat(task.droppedAfterRestoredEnd()).isEqualTo(2);
    assertThat(messages()).as("no group fired twice").noneMatch(WindowedValue.class::isInstance);
    assertThat(messages().get(messages().size() - 1)).as("its end of stream again (idempotent downstream)")
        .isInstanceOf(ProducerEndOfStream.class);
  }
}
