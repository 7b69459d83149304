// Role: the CPUs and parallelism each run's child JVM gets: --cores (parallelism), --cpus (pinning
// the JVM to that many CPUs), and their per-run values from --sweep cores=... / cpus=....
// Threading: immutable; safe from any thread.
package dev.weir.nexmark.driver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The processors a run is given. Two driver options, each also a sweep name:
 * <ul>
 *   <li>{@code cores}: the parallelism given to Flink and Weir and the threads of bare. Alone it
 *       leaves the JVM on every CPU of the machine, so a 1-core run still has the other CPU for
 *       its JIT compilers, GC threads and RocksDB's background jobs.</li>
 *   <li>{@code cpus}: the child JVM runs pinned to CPUs {@code 0..N-1} ({@code taskset -c}) and
 *       sized for them ({@code -XX:ActiveProcessorCount=N}, so {@code availableProcessors()}, and
 *       with it the default parallelism, containers, GC and compiler threads, follow), and the
 *       parallelism defaults to N. This is what a scaling measurement needs: one CPU against two,
 *       everything in the JVM included.</li>
 * </ul>
 * A sweep value wins over the option of the same name for its runs; neither name is passed to the
 * child as a pipeline option.
 */
public final class RunCpus {
  /** Sweep names the driver itself consumes. */
  static final Set<String> SWEEP_NAMES = Set.of("cores", "cpus");

  private final Integer cores;
  private final Integer cpus;
  private final int available;

  private RunCpus(Integer cores, Integer cpus, int available) {
    this.cores = cores;
    this.cpus = cpus;
    this.available = available;
  }

  /**
   * Validates the two options.
   *
   * @param cores {@code --cores}, or null for the default
   * @param cpus {@code --cpus}, or null for no pinning
   * @param available this machine's processors (at least 1)
   * @throws IllegalArgumentException naming the option and its allowed values when one is out of
   *     range
   */
  public static RunCpus of(Integer cores, Integer cpus, int available) {
    if (cores != null) {
      checkCores(cores);
    }
    if (cpus != null) {
      checkCpus(cpus, available);
    }
    return new RunCpus(cores, cpus, available);
  }

  /** A fixed parallelism and no pinning (the driver before {@code --cpus}; tests). */
  public static RunCpus fixed(int cores) {
    return of(cores, null, Math.max(1, Runtime.getRuntime().availableProcessors()));
  }

  /**
   * Validates a sweep's values when it varies {@code cores} or {@code cpus}; other sweeps pass.
   *
   * @throws IllegalArgumentException naming the sweep and the allowed values
   */
  void checkSweep(Sweep sweep) {
    if (!SWEEP_NAMES.contains(sweep.name())) {
      return;
    }
    for (String v : sweep.values()) {
      int n;
      try {
        n = Integer.parseInt(v.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--sweep " + sweep.name() + "=" + v + ": not a whole number; "
            + allowed(sweep.name()));
      }
      if (sweep.name().equals("cores")) {
        checkCores(n);
      } else {
        checkCpus(n, available);
      }
    }
  }

  /** The parallelism of a run: its swept cores, else --cores, else its CPUs, else every processor. */
  public int parallelism(RunSpec spec) {
    String swept = spec.sweep().get("cores");
    if (swept != null) {
      return Integer.parseInt(swept.trim());
    }
    if (cores != null) {
      return cores;
    }
    Integer pinned = cpus(spec);
    return pinned != null ? pinned : available;
  }

  /** The parallelism of runs without a sweep of their own (results.json's settings). */
  public int parallelism() {
    return cores != null ? cores : cpus != null ? cpus : available;
  }

  /** The CPUs a run is pinned to (its swept cpus, else --cpus), or null when it is not pinned. */
  public Integer cpus(RunSpec spec) {
    String swept = spec.sweep().get("cpus");
    return swept != null ? Integer.valueOf(swept.trim()) : cpus;
  }

  /** {@code --cpus}, or null. */
  public Integer cpusOption() {
    return cpus;
  }

  /**
   * The words in front of the {@code java} command of a run: {@code taskset -c 0-(N-1)} when it is
   * pinned, else none.
   */
  List<String> launcher(RunSpec spec) {
    Integer n = cpus(spec);
    if (n == null) {
      return List.of();
    }
    return List.of(taskset(), "-c", n == 1 ? "0" : "0-" + (n - 1));
  }

  /** The JVM flags of a run: {@code -XX:ActiveProcessorCount=N} when it is pinned, else none. */
  List<String> jvmFlags(RunSpec spec) {
    Integer n = cpus(spec);
    return n == null ? List.of() : List.of("-XX:ActiveProcessorCount=" + n);
  }

  /** The options of a run's sweep that go to the child: all but {@link #SWEEP_NAMES}. */
  static Map<String, String> childSweep(Map<String, String> sweep) {
    if (sweep.keySet().stream().noneMatch(SWEEP_NAMES::contains)) {
      return sweep;
    }
    Map<String, String> rest = new java.util.LinkedHashMap<>(sweep);
    rest.keySet().removeAll(SWEEP_NAMES);
    return rest;
  }

  /**
   * {@code taskset}'s path, looked up on {@code PATH} (util-linux).
   *
   * @throws IllegalStateException naming --cpus when there is none
   */
  static String taskset() {
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, "taskset");
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    throw new IllegalStateException("--cpus pins each run with taskset (util-linux), which is not on "
        + "PATH; install util-linux or leave --cpus out");
  }

  private static void checkCores(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("--cores=" + n + ": " + allowed("cores"));
    }
  }

  private static void checkCpus(int n, int available) {
    if (n < 1 || n > available) {
      throw new IllegalArgumentException("--cpus=" + n + ": allowed values 1.." + available
          + " (this machine's processors)");
    }
  }

  private static String allowed(String name) {
    return name.equals("cores") ? "allowed values are whole numbers >= 1" : "allowed values are 1..N, "
        + "N this machine's processors";
  }
}
