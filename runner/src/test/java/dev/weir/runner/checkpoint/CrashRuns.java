package dev.weir.runner.checkpoint;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the crash tests share: the child's pipeline options, the checkpoint layout of the lead's
 * contract ({@code <stateDirectory>/<jobName>/checkpoints/chk-<id>/} with {@code checkpoint.json}
 * written last), what a child's log says about its restore, and a readable diff of two result
 * directories.
 */
final class CrashRuns {
  /** Name of the manifest that makes a checkpoint complete. */
  static final String MANIFEST = "checkpoint.json";
  private static final Pattern RESTORED = Pattern.compile("restored from checkpoint (\\d+)");
  private static final Pattern NO_CHECKPOINT = Pattern.compile("\\bno checkpoint\\b(?!\\.)");
  private static final Pattern READER = Pattern.compile("^READER split=(\\d+) from=(\\d+)");

  private CrashRuns() {}

  /** A fresh directory {@code target/crash-it/<name>} (the module's build directory) for a test's files. */
  static Path freshDirectory(String name) throws IOException {
    Path dir = Path.of("target", "crash-it", name).toAbsolutePath();
    if (Files.exists(dir)) {
      try (Stream<Path> walk = Files.walk(dir)) {
        for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
          Files.delete(p);
        }
      }
    }
    Files.createDirectories(dir);
    return dir;
  }

  /**
   * Arguments of {@link CrashablePipelineMain}: RocksDB, streaming, two containers and two
   * partitions per stage, the job {@code jobName} in {@code stateDirectory}, then {@code extra}.
   */
  static List<String> args(Path out, long count, long elementsPerSecond, int splits, String jobName,
      Path stateDirectory, String... extra) {
    return args(out, count, elementsPerSecond, splits, jobName, stateDirectory, 2, 2, extra);
  }

  /** As the other {@code args}, with {@code parallelism} partitions per keyed stage on {@code containers} containers. */
  static List<String> args(Path out, long count, long elementsPerSecond, int splits, String jobName,
      Path stateDirectory, int parallelism, int containers, String... extra) {
    List<String> args = new ArrayList<>(List.of(out.toString(), Long.toString(count),
        Long.toString(elementsPerSecond), Integer.toString(splits), "--runner=WeirRunner", "--streaming=true",
        "--stateBackend=rocksdb", "--containers=" + containers, "--parallelism=" + parallelism,
        "--jobName=" + jobName, "--stateDirectory=" + stateDirectory));
    args.addAll(List.of(extra));
    return args;
  }

  /** The checkpoints directory of a job. */
  static Path checkpointsDirectory(Path stateDirectory, String jobName) {
    return stateDirectory.resolve(jobName).resolve("checkpoints");
  }

  /** The id of a {@code chk-<id>} directory, or -1 for other names. */
  static long checkpointId(Path dir) {
    String name = dir.getFileName().toString();
    if (!name.matches("chk-\\d+")) {
      return -1;
    }
    return Long.parseLong(name.substring(4));
  }

  /** The {@code chk-*} directories (complete or not), oldest first. */
  static List<Path> checkpoints(Path checkpointsDirectory) {
    if (!Files.isDirectory(checkpointsDirectory)) {
      return List.of();
    }
    try (Stream<Path> list = Files.list(checkpointsDirectory)) {
      return list.filter(p -> checkpointId(p) >= 0)
          .sorted(Comparator.comparingLong(CrashRuns::checkpointId)).toList();
    } catch (IOException e) {
      // a checkpoint deleted by retention while listed
      return List.of();
    }
  }

  /** The complete checkpoints (with their manifest), oldest first. */
  static List<Path> completeCheckpoints(Path checkpointsDirectory) {
    return checkpoints(checkpointsDirectory).stream().filter(p -> Files.isRegularFile(p.resolve(MANIFEST))).toList();
  }

  /** The checkpoint id of the child's {@code restored from checkpoint <id>} line, or -1. */
  static long restoredId(List<String> lines) {
    for (String line : lines) {
      Matcher m = RESTORED.matcher(line);
      if (m.find()) {
        return Long.parseLong(m.group(1));
      }
    }
    return -1;
  }

  /** Whether the child logged that it started without a checkpoint. */
  static boolean startedWithoutCheckpoint(List<String> lines) {
    // not "no checkpoints ..." nor "(no checkpoint.json)" (an incomplete checkpoint skipped)
    return lines.stream().anyMatch(l -> NO_CHECKPOINT.matcher(l).find());
  }

  /** Per split, the index its first reader started from ({@code READER} lines); -1 if none. */
  static long[] readerStarts(List<String> lines, int splits) {
    long[] from = new long[splits];
    java.util.Arrays.fill(from, -1);
    for (String line : lines) {
      Matcher m = READER.matcher(line);
      if (m.find()) {
        int split = Integer.parseInt(m.group(1));
        if (from[split] < 0) {
          from[split] = Long.parseLong(m.group(2));
        }
      }
    }
    return from;
  }

  /**
   * Asserts that every split's first reader started past the split's first index (split
   * {@code s} starts at {@code s}): the run resumed from a checkpoint mark.
   */
  static void assertResumedPastStart(long[] starts, String what) {
    for (int split = 0; split < starts.length; split++) {
      if (starts[split] <= split) {
        throw new AssertionError(what + ": split " + split + " started from " + starts[split]
            + " (-1: no reader), not past its first index " + split + ": " + java.util.Arrays.toString(starts));
      }
    }
  }

  /** The output lines containing {@code text}. */
  static List<String> linesWith(List<String> lines, String text) {
    return lines.stream().filter(l -> l.contains(text)).toList();
  }

  /**
   * The differences between an expected and an actual result directory, at most {@code max}
   * of them, one per line ({@code missing}, {@code unexpected}, {@code differs}); empty if equal.
   */
  static String diff(Map<String, String> expected, Map<String, String> actual, int max) {
    Set<String> names = new TreeSet<>(expected.keySet());
    names.addAll(actual.keySet());
    StringBuilder diff = new StringBuilder();
    int shown = 0;
    int total = 0;
    for (String name : names) {
      String e = expected.get(name);
      String a = actual.get(name);
      if (e != null && e.equals(a)) {
        continue;
      }
      total++;
      if (shown++ < max) {
        if (a == null) {
          diff.append("\n  missing    ").append(name).append(": expected ").append(e);
        } else if (e == null) {
          diff.append("\n  unexpected ").append(name).append(": ").append(a);
        } else {
          diff.append("\n  differs    ").append(name).append(": expected ").append(e).append(", got ").append(a);
        }
      }
    }
    return total == 0 ? "" : total + " of " + names.size() + " files differ:" + diff;
  }

  /** Size of a file, 0 if it is gone. */
  static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return 0;
    }
  }

  /** Every regular file under {@code dir}. */
  static List<Path> files(Path dir) {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
