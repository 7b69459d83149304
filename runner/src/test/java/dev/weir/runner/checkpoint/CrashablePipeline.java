package dev.weir.runner.checkpoint;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerMap;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The pipeline of the crash tests and the results it must produce, computed independently of any
 * runner ({@link #expected}).
 *
 * <p>Over {@link PacedIndexSource} (index {@code i}, timestamp {@code i} ms), keyed by
 * {@code i % }{@value #KEYS}:
 *
 * <ul>
 *   <li><b>KeyState</b>, a stateful DoFn in the global window: per key a count and a sum
 *       ({@code ValueState}), a buffer ({@code BagState}) that a processing-time timer moves into a
 *       flushed sum (however often it fires, the final flushed total is the sum), an event-time
 *       timer family with one timer at the end of each {@value #WINDOW_MS} ms window the key has
 *       elements in, counting the windows it fired for,
 *       and an event-time timer at the end of the global window writing {@code final/key-<k>}.
 *   <li><b>Scale</b>: fixed {@value #WINDOW_MS} ms windows, values multiplied by a side input
 *       ({@code View.asSingleton} of a created {@value #MULTIPLIER});
 *   <li><b>Group</b>: GroupByKey, per (window, key) count, sum, min and max to
 *       {@code groups/<windowStart>-<k>};
 *   <li><b>Sum</b>: Combine ({@code Sum.longsPerKey}) per (window, key) to
 *       {@code sums/<windowStart>-<k>}; re-windowed into the global window, <b>Tally</b> (stateful)
 *       counts the window sums per key and adds them up, written to {@code tally/key-<k>} when the
 *       watermark reaches +infinity (a window result lost or counted twice in a restore shows
 *       here even when its own file was written before the crash).
 * </ul>
 *
 * <p>Every result is written idempotently as one file per result (temporary file, then an atomic
 * rename), so a job that replays from a checkpoint rewrites a file with the same content and the
 * directory after any number of crashes must equal {@link #expected}. With
 * {@code weir.crash.announce=true} the Group step prints {@code FIRED groups/<name>} for key 0 of
 * every window (a test kills a job right after to land in the middle of timer firing).
 */
public final class CrashablePipeline {
  /** Number of keys. */
  public static final int KEYS = 13;
  /** Size of the fixed windows and the tick timer's period, in ms of event time. */
  public static final long WINDOW_MS = 4_000;
  /** The side input's value. */
  public static final long MULTIPLIER = 3;
  /** Delay of the processing-time flush timer, in ms. */
  static final long FLUSH_DELAY_MS = 50;

  private CrashablePipeline() {}

  /** Adds the pipeline reading {@code source} and writing its results under {@code out} to {@code p}. */
  public static void build(Pipeline p, PacedIndexSource source, Path out) {
    String dir = out.toAbsolutePath().toString();
    PCollection<KV<Integer, Long>> keyed = p.apply("Read", Read.from(source))
        .apply("KeyBy", ParDo.of(new KeyByFn()));
    keyed.apply("KeyState", ParDo.of(new KeyStateFn()))
        .apply("WriteFinal", ParDo.of(new WriteFileFn(dir)));

    PCollectionView<Long> multiplier = p.apply("Multiplier", Create.of(MULTIPLIER)).apply(View.asSingleton());
    PCollection<KV<Integer, Long>> scaled = keyed
        .apply("Window", Window.into(FixedWindows.of(Duration.millis(WINDOW_MS))))
        .apply("Scale", ParDo.of(new ScaleFn(multiplier)).withSideInputs(multiplier));
    scaled.apply("Group", GroupByKey.create())
        .apply("Summarize", ParDo.of(new SummarizeFn()))
        .apply("WriteGroups", ParDo.of(new WriteFileFn(dir)));
    PCollection<KV<Integer, Long>> sums = scaled.apply("Sum", Sum.longsPerKey());
    sums.apply("NameSums", ParDo.of(new NameSumFn()))
        .apply("WriteSums", ParDo.of(new WriteFileFn(dir)));
    sums.apply("Rewindow", Window.into(new GlobalWindows()))
        .apply("Tally", ParDo.of(new TallyFn()))
        .apply("WriteTally", ParDo.of(new WriteFileFn(dir)));
  }

  /**
   * The files (relative path, content) that {@link #build} writes for the indexes
   * {@code 0..count-1}, computed directly.
   */
  public static Map<String, String> expected(long count) {
    long[] n = new long[KEYS];
    long[] sum = new long[KEYS];
    long[] ticks = new long[KEYS];
    long[] lastWindow = new long[KEYS];
    java.util.Arrays.fill(lastWindow, -1);
    Map<Long, long[]> windows = new TreeMap<>(); // window start * KEYS + key -> count, sum, min, max
    for (long i = 0; i < count; i++) {
      int k = (int) (i % KEYS);
      n[k]++;
      sum[k] += i;
      long start = i - i % WINDOW_MS;
      if (lastWindow[k] != start) {
        lastWindow[k] = start;
        ticks[k]++;
      }
      long v = i * MULTIPLIER;
      long[] w = windows.computeIfAbsent(start * KEYS + k, x -> new long[] {0, 0, Long.MAX_VALUE, Long.MIN_VALUE});
      w[0]++;
      w[1] += v;
      w[2] = Math.min(w[2], v);
      w[3] = Math.max(w[3], v);
    }
    Map<String, String> files = new TreeMap<>();
    long[] windowCount = new long[KEYS];
    for (Map.Entry<Long, long[]> e : windows.entrySet()) {
      long start = e.getKey() / KEYS;
      int k = (int) (e.getKey() % KEYS);
      long[] w = e.getValue();
      files.put(groupsName(start, k), groupsContent(w[0], w[1], w[2], w[3]));
      files.put(sumsName(start, k), "sum=" + w[1]);
      windowCount[k]++;
    }
    for (int k = 0; k < KEYS; k++) {
      if (n[k] > 0) {
        files.put(keyName("final", k), finalContent(n[k], sum[k], sum[k], ticks[k], true));
        files.put(keyName("tally", k), tallyContent(windowCount[k], sum[k] * MULTIPLIER));
      }
    }
    return files;
  }

  /** The files under {@code dir} (relative path with '/', content), skipping names starting with '.'. */
  public static Map<String, String> read(Path dir) throws IOException {
    Map<String, String> files = new TreeMap<>();
    if (!Files.isDirectory(dir)) {
      return files;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
        if (f.getFileName().toString().startsWith(".")) {
          continue;
        }
        files.put(dir.relativize(f).toString().replace('\\', '/'), Files.readString(f, StandardCharsets.UTF_8));
      }
    }
    return files;
  }

  static String groupsName(long windowStart, int key) {
    return String.format("groups/%012d-%02d", windowStart, key);
  }

  static String sumsName(long windowStart, int key) {
    return String.format("sums/%012d-%02d", windowStart, key);
  }

  static String keyName(String kind, int key) {
    return String.format("%s/key-%02d", kind, key);
  }

  static String groupsContent(long count, long sum, long min, long max) {
    return "count=" + count + " sum=" + sum + " min=" + min + " max=" + max;
  }

  static String finalContent(long count, long sum, long flushedTotal, long ticks, boolean processingTimerFired) {
    return "count=" + count + " sum=" + sum + " flushedTotal=" + flushedTotal + " ticks=" + ticks
        + " processingTimerFired=" + processingTimerFired;
  }

  static String tallyContent(long windows, long total) {
    return "windows=" + windows + " total=" + total;
  }

  private static long orZero(Long v) {
    return v == null ? 0 : v;
  }

  /** {@code i -> KV(i % KEYS, i)}. */
  static final class KeyByFn extends DoFn<Long, KV<Integer, Long>> {
    @ProcessElement
    public void process(@Element Long i, OutputReceiver<KV<Integer, Long>> out) {
      out.output(KV.of((int) (i % KEYS), i));
    }
  }

  /** Per-key state and timers of all kinds; writes the key's final state at +infinity. */
  static final class KeyStateFn extends DoFn<KV<Integer, Long>, KV<String, String>> {
    @StateId("count")
    private final StateSpec<ValueState<Long>> countSpec = StateSpecs.value(VarLongCoder.of());

    @StateId("sum")
    private final StateSpec<ValueState<Long>> sumSpec = StateSpecs.value(VarLongCoder.of());

    @StateId("ticks")
    private final StateSpec<ValueState<Long>> ticksSpec = StateSpecs.value(VarLongCoder.of());

    @StateId("buffer")
    private final StateSpec<BagState<Long>> bufferSpec = StateSpecs.bag(VarLongCoder.of());

    @StateId("flushed")
    private final StateSpec<ValueState<Long>> flushedSpec = StateSpecs.value(VarLongCoder.of());

    @StateId("flushPending")
    private final StateSpec<ValueState<Boolean>> flushPendingSpec = StateSpecs.value(BooleanCoder.of());

    @StateId("flushFired")
    private final StateSpec<ValueState<Boolean>> flushFiredSpec = StateSpecs.value(BooleanCoder.of());

    @TimerFamily("tick")
    private final TimerSpec tickSpec = TimerSpecs.timerMap(TimeDomain.EVENT_TIME);

    @TimerId("flush")
    private final TimerSpec flushSpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    @TimerId("final")
    private final TimerSpec finalSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(@Element KV<Integer, Long> e, @Timestamp Instant timestamp,
        @StateId("count") ValueState<Long> count, @StateId("sum") ValueState<Long> sum,
        @StateId("buffer") BagState<Long> buffer, @StateId("flushPending") ValueState<Boolean> flushPending,
        @TimerFamily("tick") TimerMap tick, @TimerId("flush") Timer flush, @TimerId("final") Timer last) {
      count.write(orZero(count.read()) + 1);
      sum.write(orZero(sum.read()) + e.getValue());
      buffer.add(e.getValue());
      long t = timestamp.getMillis();
      long windowStart = t - t % WINDOW_MS;
      // one timer per window (a timer family): a single timer re-set for a later window would
      // drop the earlier window's firing whenever elements run ahead of the watermark
      tick.set(Long.toString(windowStart), new Instant(windowStart + WINDOW_MS - 1));
      if (flushPending.read() == null) {
        flushPending.write(true);
        flush.offset(Duration.millis(FLUSH_DELAY_MS)).setRelative();
      }
      last.set(GlobalWindow.INSTANCE.maxTimestamp());
    }

    @OnTimerFamily("tick")
    public void onTick(@StateId("ticks") ValueState<Long> ticks) {
      ticks.write(orZero(ticks.read()) + 1);
    }

    @OnTimer("flush")
    public void onFlush(@StateId("buffer") BagState<Long> buffer, @StateId("flushed") ValueState<Long> flushed,
        @StateId("flushPending") ValueState<Boolean> flushPending, @StateId("flushFired") ValueState<Boolean> fired) {
      long moved = 0;
      for (long v : buffer.read()) {
        moved += v;
      }
      buffer.clear();
      flushed.write(orZero(flushed.read()) + moved);
      flushPending.clear();
      fired.write(true);
    }

    @OnTimer("final")
    public void onFinal(@Key Integer key, @StateId("count") ValueState<Long> count, @StateId("sum") ValueState<Long> sum,
        @StateId("ticks") ValueState<Long> ticks, @StateId("buffer") BagState<Long> buffer,
        @StateId("flushed") ValueState<Long> flushed, @StateId("flushFired") ValueState<Boolean> fired,
        OutputReceiver<KV<String, String>> out) {
      long total = orZero(flushed.read());
      for (long v : buffer.read()) {
        total += v;
      }
      out.output(KV.of(keyName("final", key), finalContent(orZero(count.read()), orZero(sum.read()), total,
          orZero(ticks.read()), Boolean.TRUE.equals(fired.read()))));
    }
  }

  /** Multiplies values by the side input. */
  static final class ScaleFn extends DoFn<KV<Integer, Long>, KV<Integer, Long>> {
    private final PCollectionView<Long> multiplier;

    ScaleFn(PCollectionView<Long> multiplier) {
      this.multiplier = multiplier;
    }

    @ProcessElement
    public void process(ProcessContext c) {
      c.output(KV.of(c.element().getKey(), c.element().getValue() * c.sideInput(multiplier)));
    }
  }

  /** One group's count, sum, min and max, named by window and key. */
  static final class SummarizeFn extends DoFn<KV<Integer, Iterable<Long>>, KV<String, String>> {
    @ProcessElement
    public void process(@Element KV<Integer, Iterable<Long>> group, BoundedWindow window,
        OutputReceiver<KV<String, String>> out) {
      long n = 0;
      long sum = 0;
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (long v : group.getValue()) {
        n++;
        sum += v;
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      String name = groupsName(((IntervalWindow) window).start().getMillis(), group.getKey());
      out.output(KV.of(name, groupsContent(n, sum, min, max)));
      if (group.getKey() == 0 && Boolean.getBoolean("weir.crash.announce")) {
        System.out.println("FIRED " + name);
        System.out.flush();
      }
    }
  }

  /** A window sum, named by window and key. */
  static final class NameSumFn extends DoFn<KV<Integer, Long>, KV<String, String>> {
    @ProcessElement
    public void process(@Element KV<Integer, Long> e, BoundedWindow window, OutputReceiver<KV<String, String>> out) {
      out.output(KV.of(sumsName(((IntervalWindow) window).start().getMillis(), e.getKey()), "sum=" + e.getValue()));
    }
  }

  /** Per key: how many window sums arrived and their total; written at +infinity. */
  static final class TallyFn extends DoFn<KV<Integer, Long>, KV<String, String>> {
    @StateId("windows")
    private final StateSpec<ValueState<Long>> windowsSpec = StateSpecs.value(VarLongCoder.of());

    @StateId("total")
    private final StateSpec<ValueState<Long>> totalSpec = StateSpecs.value(VarLongCoder.of());

    @TimerId("final")
    private final TimerSpec finalSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @ProcessElement
    public void process(@Element KV<Integer, Long> e, @StateId("windows") ValueState<Long> windows,
        @StateId("total") ValueState<Long> total, @TimerId("final") Timer last) {
      windows.write(orZero(windows.read()) + 1);
      total.write(orZero(total.read()) + e.getValue());
      last.set(GlobalWindow.INSTANCE.maxTimestamp());
    }

    @OnTimer("final")
    public void onFinal(@Key Integer key, @StateId("windows") ValueState<Long> windows,
        @StateId("total") ValueState<Long> total, OutputReceiver<KV<String, String>> out) {
      out.output(KV.of(keyName("tally", key), tallyContent(orZero(windows.read()), orZero(total.read()))));
    }
  }

  /**
   * Writes {@code KV(relative path, content)} under a directory: a temporary file, then an atomic
   * rename over the target, so a replayed result overwrites its earlier copy and a kill never
   * leaves a half-written result (stray temporaries start with '.').
   */
  static final class WriteFileFn extends DoFn<KV<String, String>, Void> {
    private final String dir;

    WriteFileFn(String dir) {
      this.dir = dir;
    }

    @ProcessElement
    public void process(@Element KV<String, String> file) {
      Path target = Path.of(dir, file.getKey());
      Path tmp = target.resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
      try {
        Files.createDirectories(target.getParent());
        Files.writeString(tmp, file.getValue(), StandardCharsets.UTF_8);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write " + target, e);
      }
    }
  }
}
