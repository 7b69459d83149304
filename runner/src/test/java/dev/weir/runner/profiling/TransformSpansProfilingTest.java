package dev.weir.runner.profiling;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import dev.weir.runner.metrics.TransformSpans;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.IntStream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Per-PTransform spans: without the profiler the span calls are inert (every pipeline test runs
 * them in a plain JVM; this one checks the tracker directly), and under async-profiler (a child
 * JVM started with the agent from the async-profiler jar on the test classpath) the recording's
 * {@code profiler.Span} events are tagged with the pipeline's transform names, also when the
 * ParDos run on the containers' worker threads (issue 41: each worker has its own step scope).
 */
class TransformSpansProfilingTest {

  @Test
  void spanTrackerIsInertWithoutTheAgent() {
    TransformSpans spans = new TransformSpans();
    String outer = spans.enter("A");
    assertThat(outer).isNull();
    String inner = spans.enter("B");
    assertThat(inner).isEqualTo("A");
    assertThat(spans.current()).isEqualTo("B");
    spans.exit(inner);
    assertThat(spans.current()).isEqualTo("A");
    spans.exit(outer);
    assertThat(spans.current()).isNull();
    assertThat(one.profiler.Span.start()).isZero(); // not recording: the calls above did nothing
  }

  /**
   * @param concurrency the child's concurrency options, empty for none: with them the ParDos run
   *     on worker threads, whose spans must carry the same transform names
   */
  @ParameterizedTest(name = "concurrency options [{0}]")
  @ValueSource(strings = {"", "--containerThreadPoolSize=2 --taskMaxConcurrency=2"})
  void profiledPipelineEmitsSpansNamedAfterItsTransforms(String concurrency, @TempDir Path dir) throws Exception {
    Path lib = extractAgent(dir);
    Path jfr = dir.resolve("run.jfr");
    Path args = dir.resolve("java.args");
    // An argument file: the test class path is longer than one command-line argument may be.
    Files.writeString(args, "-cp\n\"" + System.getProperty("java.class.path").replace("\\", "\\\\") + "\"\n",
        StandardCharsets.UTF_8);
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-agentpath:" + lib + "=start,event=itimer,interval=1ms,jfr,file=" + jfr);
    command.add("-Xmx512m");
    command.add("@" + args);
    command.add(ChildPipeline.class.getName());
    if (!concurrency.isEmpty()) {
      command.addAll(List.of(concurrency.split(" ")));
    }
    java.time.Instant launched = java.time.Instant.now();
    Process child = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(dir.resolve("child.log").toFile()).start();
    assertThat(child.waitFor(240, TimeUnit.SECONDS)).as("child finished").isTrue();
    assertThat(child.exitValue()).as("child exit code; log:\n%s", Files.readString(dir.resolve("child.log")))
        .isZero();

    List<RecordedEvent> spans = spans(jfr);
    Map<String, Integer> tags = new TreeMap<>();
    for (RecordedEvent span : spans) {
      tags.merge(span.getString("tag"), 1, Integer::sum);
    }
    // Tags are the primitive transforms' full names; the CPU-heavy ones are sampled for sure.
    assertThat(tags.keySet()).as("span tags").contains("Group")
        .anyMatch(tag -> tag.startsWith("Burn/"))
        .anyMatch(tag -> tag.startsWith("Sum/"))
        .allMatch(tag -> tag.startsWith("Create/") || tag.startsWith("Burn/") || tag.startsWith("Sum/")
            || tag.equals("Group") || tag.startsWith("s"), "a transform or a stream writer");
    if (!concurrency.isEmpty()) {
      assertThat(spans).as("spans of Burn on a worker thread")
          .anyMatch(span -> span.getString("tag").startsWith("Burn/") && span.getThread() != null
              && span.getThread().getJavaName().contains("-worker-"));
    }
    // Every span lies inside the child's life: none starts at the clock's origin (a thread's first
    // sampled segment once did, a span of some 36 hours on a machine up that long).
    java.time.Instant finished = java.time.Instant.now();
    for (RecordedEvent span : spans) {
      assertThat(span.getStartTime()).as("start of span %s", span.getString("tag"))
          .isAfterOrEqualTo(launched.minusSeconds(1));
      assertThat(span.getEndTime()).as("end of span %s", span.getString("tag")).isBeforeOrEqualTo(finished);
    }
    // Exclusive segments: on one thread, spans never overlap (a sample belongs to one transform).
    Map<Long, List<RecordedEvent>> byThread = new TreeMap<>();
    for (RecordedEvent span : spans) {
      byThread.computeIfAbsent(span.getThread() == null ? -1 : span.getThread().getJavaThreadId(),
          t -> new ArrayList<>()).add(span);
    }
    for (List<RecordedEvent> thread : byThread.values()) {
      thread.sort((a, b) -> a.getStartTime().compareTo(b.getStartTime()));
      for (int i = 1; i < thread.size(); i++) {
        assertThat(thread.get(i).getStartTime()).as("span %s starts after the previous one ends", i)
            .isAfterOrEqualTo(thread.get(i - 1).getEndTime());
      }
    }
  }

  private static List<RecordedEvent> spans(Path jfr) throws IOException {
    List<RecordedEvent> spans = new ArrayList<>();
    try (RecordingFile file = new RecordingFile(jfr)) {
      while (file.hasMoreEvents()) {
        RecordedEvent event = file.readEvent();
        if (event.getEventType().getName().equals("profiler.Span") && event.hasField("tag")) {
          spans.add(event);
        }
      }
    }
    return spans;
  }

  /** Copies linux-x64/libasyncProfiler.so out of the async-profiler jar on the class path. */
  private static Path extractAgent(Path dir) throws IOException, URISyntaxException {
    Path jar = Paths.get(one.profiler.Span.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path lib = dir.resolve("libasyncProfiler.so");
    try (JarFile file = new JarFile(jar.toFile());
        InputStream in = file.getInputStream(file.getEntry("linux-x64/libasyncProfiler.so"))) {
      Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
    }
    return lib;
  }

  /** The profiled program: two CPU-heavy ParDos around a GroupByKey, on WeirRunner. */
  public static final class ChildPipeline {
    /** @param args more pipeline options (concurrency) */
    public static void main(String[] args) {
      List<String> all = new ArrayList<>(List.of("--runner=WeirRunner", "--parallelism=2", "--containers=2",
          "--stateBackend=MEMORY"));
      all.addAll(List.of(args));
      WeirPipelineOptions options = PipelineOptionsFactory.fromArgs(all.toArray(new String[0]))
          .as(WeirPipelineOptions.class);
      Pipeline p = Pipeline.create(options);
      p.apply("Create", Create.of(IntStream.range(0, 400).boxed().toList()))
          .apply("Burn", ParDo.of(new DoFn<Integer, KV<Integer, Long>>() {
            @ProcessElement
            public void process(@Element Integer i, OutputReceiver<KV<Integer, Long>> out) {
              out.output(KV.of(i % 10, burn(i)));
            }
          }))
          .apply("Group", GroupByKey.create())
          .apply("Sum", ParDo.of(new DoFn<KV<Integer, Iterable<Long>>, Long>() {
            @ProcessElement
            public void process(@Element KV<Integer, Iterable<Long>> kv, OutputReceiver<Long> out) {
              long sum = 0;
              for (long v : kv.getValue()) {
                sum += burn(v);
              }
              out.output(sum);
            }
          }));
      PipelineResult result = p.run();
      result.waitUntilFinish();
      System.exit(result.getState() == PipelineResult.State.DONE ? 0 : 1);
    }

    /** Spends about a millisecond of CPU, so that the profiler samples every transform. */
    static long burn(long seed) {
      long x = seed;
      long end = System.nanoTime() + 1_000_000L;
      while (System.nanoTime() < end) {
        for (int k = 0; k < 1000; k++) {
          x = x * 6364136223846793005L + 1442695040888963407L;
        }
      }
      return x & 0xff;
    }
  }
}
