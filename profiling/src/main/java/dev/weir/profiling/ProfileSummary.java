package dev.weir.profiling;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The text summary of a CPU profile, computed from collapsed stacks (one line per distinct stack:
 * frames from root to leaf separated by {@code ;}, then a space and the sample count): the top
 * frames by self time and the share of samples per {@link FrameCategory}. Immutable.
 *
 * @param totalSamples all CPU samples
 * @param topSelf the frames with the most self samples, most first
 * @param shares samples per category (every category present, possibly 0)
 */
public record ProfileSummary(long totalSamples, List<FrameCount> topSelf, Map<FrameCategory, Long> shares) {

  /** A frame and its self samples. */
  public record FrameCount(String frame, long samples) {}

  /** Reads a collapsed-stacks file; see {@link #of(Stream, int)}. */
  public static ProfileSummary read(Path collapsed, int top) {
    try (Stream<String> lines = Files.lines(collapsed, StandardCharsets.UTF_8)) {
      return of(lines, top);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + collapsed, e);
    }
  }

  /**
   * Summarises collapsed stacks.
   *
   * @param lines collapsed-stack lines; blank or malformed lines are skipped
   * @param top how many self frames to keep
   */
  public static ProfileSummary of(Stream<String> lines, int top) {
    Map<String, Long> self = new HashMap<>();
    Map<FrameCategory, Long> shares = new EnumMap<>(FrameCategory.class);
    for (FrameCategory c : FrameCategory.values()) {
      shares.put(c, 0L);
    }
    long[] total = {0};
    lines.forEach(line -> {
      int space = line.lastIndexOf(' ');
      if (space <= 0) {
        return;
      }
      long count;
      try {
        count = Long.parseLong(line.substring(space + 1).trim());
      } catch (NumberFormatException e) {
        return;
      }
      String[] frames = line.substring(0, space).split(";");
      total[0] += count;
      self.merge(clean(frames[frames.length - 1]), count, Long::sum);
      shares.merge(categorize(frames), count, Long::sum);
    });
    List<FrameCount> topSelf = self.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
        .limit(top)
        .map(e -> new FrameCount(e.getKey(), e.getValue()))
        .toList();
    return new ProfileSummary(total[0], topSelf, shares);
  }

  /** Attributes one stack (root first) to a category; see {@link FrameCategory}. */
  public static FrameCategory categorize(String[] frames) {
    boolean coder = false;
    for (String raw : frames) {
      String f = clean(raw);
      if (isGc(f)) {
        return FrameCategory.GC;
      }
      if (f.startsWith("org.rocksdb.") || f.startsWith("org/rocksdb/") || f.contains("rocksdb::")
          || f.startsWith("Java_org_rocksdb_")) {
        return FrameCategory.ROCKSDB;
      }
      if (isCoder(f)) {
        coder = true;
      }
    }
    if (coder) {
      return FrameCategory.CODERS;
    }
    for (int i = frames.length - 1; i >= 0; i--) {
      String f = clean(frames[i]).replace('/', '.');
      if (f.startsWith("dev.weir.")) {
        return FrameCategory.WEIR;
      }
      if (f.startsWith("org.apache.beam.sdk.nexmark.")) {
        return FrameCategory.USER; // Nexmark's queries are the pipeline's user code
      }
      if (f.startsWith("org.apache.beam.runners.flink.") || f.startsWith("org.apache.flink.")) {
        return FrameCategory.PEER_RUNNER;
      }
      if (f.startsWith("org.apache.beam.")) {
        return FrameCategory.BEAM;
      }
      if (isPlatform(frames[i], f)) {
        continue;
      }
      return FrameCategory.USER;
    }
    return FrameCategory.JVM_AND_OTHER;
  }

  private static boolean isGc(String f) {
    return f.startsWith("G1") || f.startsWith("GCTaskThread") || f.contains("GarbageCollect")
        || f.startsWith("ParallelScavenge") || f.startsWith("PSScavenge") || f.startsWith("ZDriver")
        || f.startsWith("ShenandoahControl") || f.startsWith("ConcurrentGCThread") || f.startsWith("WorkerThread::run")
        || f.startsWith("CollectedHeap::");
  }

  private static boolean isCoder(String f) {
    String dotted = f.replace('/', '.');
    int paren = dotted.indexOf('(');
    String method = paren < 0 ? dotted : dotted.substring(0, paren);
    return (method.endsWith(".encode") || method.endsWith(".decode") || method.endsWith(".encodeToByteArray")
        || method.endsWith(".decodeFromByteArray"))
        && (method.contains("Coder") || method.contains("CoderUtils"));
  }

  /** JDK classes, JVM internals, native libraries and kernel frames: not anyone's pipeline code. */
  private static boolean isPlatform(String raw, String f) {
    return raw.endsWith("_[k]") || f.startsWith("java.") || f.startsWith("javax.") || f.startsWith("jdk.")
        || f.startsWith("sun.") || f.startsWith("com.sun.") || !f.contains(".") || f.contains("::")
        || f.startsWith("one.profiler.") || f.startsWith("[");
  }

  /** Drops async-profiler's frame-type suffixes ({@code _[j]}, {@code _[i]}, {@code _[k]}, ...). */
  static String clean(String frame) {
    int suffix = frame.lastIndexOf("_[");
    return suffix > 0 && frame.endsWith("]") ? frame.substring(0, suffix) : frame;
  }

  /** Share of samples in {@code category}, 0..1. */
  public double share(FrameCategory category) {
    return totalSamples == 0 ? 0 : (double) shares.get(category) / totalSamples;
  }

  /** Renders the summary as text: the category shares, then the top self frames. */
  public String render(String title) {
    StringBuilder s = new StringBuilder(title).append('\n').append("=".repeat(title.length())).append("\n\n");
    s.append(String.format(Locale.ROOT, "CPU samples: %,d%n%nShare of CPU samples%n", totalSamples));
    for (FrameCategory c : FrameCategory.values()) {
      s.append(String.format(Locale.ROOT, "  %-14s %6.1f%%  (%,d)%n", c.name().toLowerCase(Locale.ROOT).replace('_', ' '),
          share(c) * 100, shares.get(c)));
    }
    s.append(String.format(Locale.ROOT, "%nTop frames by self time%n"));
    for (FrameCount f : topSelf) {
      s.append(String.format(Locale.ROOT, "  %6.1f%%  %,8d  %s%n",
          totalSamples == 0 ? 0 : 100.0 * f.samples() / totalSamples, f.samples(), f.frame()));
    }
    return s.toString();
  }
}
