package dev.weir.profiling;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import one.convert.Arguments;
import one.convert.Main;

/**
 * Turns one JFR recording (CPU + allocation samples + spans) into what a runner developer reads:
 *
 * <pre>
 * cpu.html, alloc.html           flame graphs (async-profiler's jfrconv)
 * cpu.collapsed, alloc.collapsed collapsed stacks, for diffs and other tools
 * summary.txt                    category shares, top 20 self frames, per-PTransform CPU shares
 * transforms/NN-name.html        one CPU flame graph per span tag (per PTransform)
 * profile.json                   all of the above as data, plus the engine and interval
 * </pre>
 *
 * An optional {@code [fromMs, toMs]} window (epoch ms, as jfrconv's {@code --from/--to}) restricts
 * every output to the measured interval of a benchmark run. Stateless; safe from any thread, but
 * each call is CPU-heavy (it parses the recording several times).
 */
public final class ProfileReport {

  /** Frames kept in the summary's hot list. */
  public static final int TOP_FRAMES = 20;

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private ProfileReport() {}

  /**
   * The interval of the recording to report on.
   *
   * @param fromMs start, epoch ms, or a non-positive value for the recording's start (jfrconv also
   *     accepts a small positive value as ms relative to the recording's start)
   * @param toMs end, epoch ms, or a non-positive value for the recording's end
   */
  public record Window(long fromMs, long toMs) {
    /** The whole recording. */
    public static final Window ALL = new Window(0, 0);
  }

  /**
   * What was written.
   *
   * @param summary the CPU summary
   * @param transformShares per span tag: its share of CPU samples (0..1)
   * @param files written file names, relative to the output folder
   */
  public record Result(ProfileSummary summary, Map<String, Double> transformShares, List<String> files) {}

  /**
   * Writes the outputs of {@code jfr} into {@code outDir}.
   *
   * @param jfr the recording
   * @param outDir the folder to write into (created)
   * @param title names the profile in flame-graph titles and the summary
   * @param engine the CPU engine the recording used, recorded next to the outputs
   * @param cpuIntervalNs the CPU sampling interval used, in ns
   * @param window the interval to keep
   * @throws UncheckedIOException if reading or writing fails
   */
  public static Result write(Path jfr, Path outDir, String title, CpuEngine engine, long cpuIntervalNs, Window window) {
    try {
      Files.createDirectories(outDir);
      List<String> files = new ArrayList<>();
      convert(jfr, outDir.resolve("cpu.html"), window, "--cpu", "-o", "html", "--title", title + " (CPU)");
      files.add("cpu.html");
      convert(jfr, outDir.resolve("alloc.html"), window, "--alloc", "--total", "-o", "html", "--title", title + " (allocation)");
      files.add("alloc.html");
      convert(jfr, outDir.resolve("cpu.collapsed"), window, "--cpu", "--dot", "-o", "collapsed");
      files.add("cpu.collapsed");
      convert(jfr, outDir.resolve("alloc.collapsed"), window, "--alloc", "--total", "--dot", "-o", "collapsed");
      files.add("alloc.collapsed");

      ProfileSummary summary = ProfileSummary.read(outDir.resolve("cpu.collapsed"), TOP_FRAMES);
      Map<String, SpanTags.TagTotals> tags = SpanTags.read(jfr, window.fromMs(), window.toMs());
      Map<String, Double> shares = new LinkedHashMap<>();
      Map<String, String> tagFiles = new LinkedHashMap<>();
      int n = 0;
      for (String tag : tags.keySet()) {
        Path collapsed = Files.createTempFile("weir-span", ".collapsed");
        try {
          convert(jfr, collapsed, window, "--cpu", "--dot", "--tag", tag, "-o", "collapsed");
          long samples = ProfileSummary.read(collapsed, 0).totalSamples();
          shares.put(tag, summary.totalSamples() == 0 ? 0 : (double) samples / summary.totalSamples());
        } finally {
          Files.deleteIfExists(collapsed);
        }
        String name = String.format(Locale.ROOT, "transforms/%02d-%s.html", ++n, safeName(tag));
        Files.createDirectories(outDir.resolve("transforms"));
        convert(jfr, outDir.resolve(name), window, "--cpu", "--tag", tag, "-o", "html", "--title", title + ": " + tag);
        tagFiles.put(tag, name);
        files.add(name);
      }

      Files.writeString(outDir.resolve("summary.txt"), render(title, engine, cpuIntervalNs, window, summary, shares, tags),
          StandardCharsets.UTF_8);
      files.add("summary.txt");

      Map<String, Object> json = new LinkedHashMap<>();
      json.put("title", title);
      json.put("recording", jfr.toAbsolutePath().toString());
      json.put("asyncProfilerVersion", AsyncProfilerLibrary.version());
      json.put("cpuEngine", engine.event());
      json.put("cpuIntervalNs", cpuIntervalNs);
      json.put("windowFromMs", window.fromMs());
      json.put("windowToMs", window.toMs());
      json.put("cpuSamples", summary.totalSamples());
      Map<String, Double> categoryShares = new LinkedHashMap<>();
      for (FrameCategory c : FrameCategory.values()) {
        categoryShares.put(c.name().toLowerCase(Locale.ROOT), summary.share(c));
      }
      json.put("categoryShares", categoryShares);
      json.put("topSelfFrames", summary.topSelf());
      List<Map<String, Object>> transforms = new ArrayList<>();
      shares.forEach((tag, share) -> {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("transform", tag);
        t.put("cpuShare", share);
        t.put("spans", tags.get(tag).count());
        t.put("spanNanos", tags.get(tag).totalNanos());
        t.put("flameGraph", tagFiles.get(tag));
        transforms.add(t);
      });
      json.put("transforms", transforms);
      files.add("profile.json");
      json.put("files", files);
      JSON.writeValue(outDir.resolve("profile.json").toFile(), json);
      return new Result(summary, shares, List.copyOf(files));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the profile of " + jfr + " to " + outDir, e);
    }
  }

  /**
   * Writes a differential CPU flame graph of {@code current} against {@code baseline} (jfrconv's
   * {@code --diff}, async-profiler 4.4+): it takes the shape of {@code current}; red frames grew,
   * blue ones shrank.
   */
  public static void diff(Path baseline, Path current, Path html, String title) {
    try {
      Files.createDirectories(html.toAbsolutePath().getParent());
      Main.main(new String[] {"--cpu", "--diff", "--title", title, baseline.toString(), current.toString(), html.toString()});
    } catch (Exception e) {
      throw new IllegalStateException("cannot diff " + baseline + " against " + current + ": " + e.getMessage(), e);
    }
  }

  private static void convert(Path jfr, Path out, Window window, String... options) throws IOException {
    List<String> args = new ArrayList<>(List.of(options));
    if (window.fromMs() > 0) {
      args.add("--from");
      args.add(Long.toString(window.fromMs()));
    }
    if (window.toMs() > 0) {
      args.add("--to");
      args.add(Long.toString(window.toMs()));
    }
    Main.convert(jfr.toString(), out.toString(), new Arguments(args.toArray(new String[0])));
  }

  private static String render(String title, CpuEngine engine, long intervalNs, Window window, ProfileSummary summary,
      Map<String, Double> shares, Map<String, SpanTags.TagTotals> tags) {
    StringBuilder s = new StringBuilder(summary.render(title));
    s.append(String.format(Locale.ROOT, "%nCPU engine: %s, interval %.1f ms, async-profiler %s%n", engine.event(),
        intervalNs / 1e6, AsyncProfilerLibrary.version()));
    if (window.fromMs() > 0 || window.toMs() > 0) {
      s.append(String.format(Locale.ROOT, "Window: from %d to %d (epoch ms; 0 = recording edge)%n", window.fromMs(), window.toMs()));
    }
    if (shares.isEmpty()) {
      s.append("\nPer PTransform: no spans in this recording (only Weir tags its transforms).\n");
    } else {
      s.append("\nShare of CPU samples per PTransform (span tag)\n");
      shares.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed()).forEach(e ->
          s.append(String.format(Locale.ROOT, "  %6.1f%%  %8d spans  %s%n", e.getValue() * 100,
              tags.get(e.getKey()).count(), e.getKey())));
    }
    return s.toString();
  }

  /** A file-name-safe version of a transform name. */
  static String safeName(String tag) {
    String s = tag.replaceAll("[^A-Za-z0-9._-]+", "_");
    return s.length() > 80 ? s.substring(0, 80) : s;
  }
}
