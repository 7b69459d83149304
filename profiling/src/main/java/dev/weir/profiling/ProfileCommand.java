package dev.weir.profiling;

import com.sun.tools.attach.VirtualMachine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/weir profile}: async-profiler for any JVM, with Weir's outputs (CPU and allocation
 * flame graphs, collapsed stacks, summary, per-PTransform breakdown, diffs). Subcommands:
 *
 * <ul>
 *   <li>{@code run}: launches a main class (for example a Beam pipeline) with the profiler loaded
 *       from the start, then writes the report;
 *   <li>{@code attach}: profiles a running JVM by pid for a while;
 *   <li>{@code diff}: a differential flame graph of two recordings;
 *   <li>{@code report}: rebuilds the outputs from a recording.
 * </ul>
 *
 * Runs on the caller's thread; {@code run} and {@code attach} block until the profile is written.
 */
@Command(name = "profile", mixinStandardHelpOptions = true,
    description = "Profiles a JVM with async-profiler: flame graphs (CPU, allocation), a summary, per-PTransform shares.",
    subcommands = {ProfileCommand.Run.class, ProfileCommand.Attach.class, ProfileCommand.Diff.class,
        ProfileCommand.Report.class})
public final class ProfileCommand implements Callable<Integer> {

  @Override
  public Integer call() {
    CommandLine.usage(this, System.out);
    return 2;
  }

  /** Options shared by the recording subcommands. */
  static final class Recording {
    @Option(names = "--out", paramLabel = "DIR", defaultValue = "profile",
        description = "Output folder (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--engine", paramLabel = "ENGINE", defaultValue = "auto",
        description = "CPU engine: auto (best available), cpu (perf_events), ctimer or itimer")
    String engine;

    @Option(names = "--interval-ms", paramLabel = "MS", defaultValue = "10",
        description = "CPU sampling interval in ms of CPU time (default: ${DEFAULT-VALUE})")
    double intervalMs;

    @Option(names = "--alloc-per-sec", paramLabel = "N", defaultValue = "" + ProfileSettings.DEFAULT_ALLOC_SAMPLES_PER_SEC,
        description = "Allocation samples per second, JVM-wide (JFR's jdk.ObjectAllocationSample; 0: no allocation "
            + "profile; default: ${DEFAULT-VALUE})")
    int allocPerSec;

    @Option(names = "--precise-frames",
        description = "Attribute samples to the exact inlined frame (HotSpot's DebugNonSafepoints); "
            + "costs the profiled JVM some 3%% more CPU (default: off; run only: an attached profiler turns it on)")
    boolean preciseFrames;

    @Option(names = "--title", paramLabel = "TEXT", description = "Title of the flame graphs and summary")
    String title;

    /**
     * Resolves the engine (probing when auto), builds the settings and writes their allocation
     * settings file into the output folder; prints the choice.
     */
    ProfileSettings settings(Path library) throws Exception {
      CpuEngine chosen;
      if ("auto".equalsIgnoreCase(engine)) {
        CpuEngine.Probe probe = CpuEngine.probe(library);
        chosen = probe.engine();
        System.out.println("profile: CPU engine " + chosen.event()
            + (probe.rejected().isEmpty() ? "" : " (rejected: " + String.join("; ", probe.rejected()) + ")"));
      } else {
        chosen = CpuEngine.parse("engine", engine);
      }
      Files.createDirectories(out);
      ProfileSettings settings = new ProfileSettings(chosen, Math.round(intervalMs * 1_000_000), allocPerSec,
          preciseFrames, out.toAbsolutePath().resolve("profile.jfr"));
      settings.writeAllocationSettings();
      return settings;
    }
  }

  /** {@code profile run}: launch and profile a main class. */
  @Command(name = "run", mixinStandardHelpOptions = true,
      description = "Launches MAIN in a new JVM under async-profiler and writes the profile when it exits.")
  static final class Run implements Callable<Integer> {
    @Mixin Recording recording;

    @Option(names = "--main", required = true, paramLabel = "CLASS", description = "The main class to run")
    String mainClass;

    @Option(names = {"--classpath", "-cp"}, paramLabel = "CP",
        description = "Its classpath (default: this JVM's classpath)")
    String classpath;

    @Option(names = "--jvm-arg", paramLabel = "ARG", description = "An extra JVM option for the child (repeatable)")
    List<String> jvmArgs = new ArrayList<>();

    @Option(names = "--skip-ms", paramLabel = "MS", defaultValue = "0",
        description = "Leave out the first MS ms of the recording (warm-up) from every output")
    long skipMs;

    @Parameters(paramLabel = "ARGS", description = "Arguments for MAIN (put them after --)")
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
      Path library = AsyncProfilerLibrary.extract();
      ProfileSettings settings = recording.settings(library);
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(jvmArgs);
      command.addAll(settings.jvmOptions(library));
      command.add("-cp");
      command.add(classpath != null ? classpath : System.getProperty("java.class.path"));
      command.add(mainClass);
      command.addAll(args);
      int exit = new ProcessBuilder(command).inheritIO().start().waitFor();
      if (!Files.isRegularFile(settings.jfr())) {
        System.err.println("profile: the child exited with " + exit + " and wrote no recording " + settings.jfr());
        return 1;
      }
      String title = recording.title != null ? recording.title : mainClass;
      ProfileReport.write(settings.jfr(), recording.out, title, settings.engine(), settings.cpuIntervalNs(),
          new ProfileReport.Window(skipMs, 0));
      System.out.println("profile: " + recording.out.toAbsolutePath() + " (cpu.html, alloc.html, summary.txt)");
      return exit;
    }
  }

  /** {@code profile attach}: profile a running JVM. */
  @Command(name = "attach", mixinStandardHelpOptions = true,
      description = "Attaches async-profiler to a running JVM for a while and writes the profile.")
  static final class Attach implements Callable<Integer> {
    @Mixin Recording recording;

    @Option(names = "--pid", required = true, paramLabel = "PID", description = "The JVM's process id")
    String pid;

    @Option(names = "--duration-sec", paramLabel = "S", defaultValue = "30",
        description = "How long to record (default: ${DEFAULT-VALUE})")
    double durationSec;

    @Override
    public Integer call() throws Exception {
      Path library = AsyncProfilerLibrary.extract();
      ProfileSettings settings = recording.settings(library);
      VirtualMachine vm = VirtualMachine.attach(pid);
      try {
        vm.loadAgentPath(library.toString(), settings.startArguments());
        Thread.sleep(Duration.ofMillis(Math.round(durationSec * 1000)).toMillis());
        vm.loadAgentPath(library.toString(), "stop");
      } finally {
        vm.detach();
      }
      String title = recording.title != null ? recording.title : "pid " + pid;
      ProfileReport.write(settings.jfr(), recording.out, title, settings.engine(), settings.cpuIntervalNs(),
          ProfileReport.Window.ALL);
      System.out.println("profile: " + recording.out.toAbsolutePath() + " (cpu.html, alloc.html, summary.txt)");
      return 0;
    }
  }

  /** {@code profile diff}: differential flame graph. */
  @Command(name = "diff", mixinStandardHelpOptions = true,
      description = "Writes a differential CPU flame graph of NEW against BASELINE (red: grew, blue: shrank).")
  static final class Diff implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "BASELINE", description = "The earlier recording (.jfr)")
    Path baseline;

    @Parameters(index = "1", paramLabel = "NEW", description = "The later recording (.jfr)")
    Path current;

    @Option(names = "--out", paramLabel = "FILE", defaultValue = "diff.html", description = "Output (default: ${DEFAULT-VALUE})")
    Path out;

    @Override
    public Integer call() {
      ProfileReport.diff(baseline, current, out, "CPU: " + current.getFileName() + " vs " + baseline.getFileName());
      System.out.println("profile: " + out.toAbsolutePath());
      return 0;
    }
  }

  /** {@code profile report}: rebuild outputs from a recording. */
  @Command(name = "report", mixinStandardHelpOptions = true,
      description = "Writes flame graphs, summary and per-PTransform shares from a recording.")
  static final class Report implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "JFR", description = "The recording")
    Path jfr;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "profile", description = "Output folder (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--engine", paramLabel = "ENGINE", defaultValue = "cpu", description = "The engine the recording used, for the record")
    String engine;

    @Option(names = "--from-ms", defaultValue = "0", description = "Window start, epoch ms or ms from the recording's start")
    long fromMs;

    @Option(names = "--to-ms", defaultValue = "0", description = "Window end, epoch ms or ms from the recording's start")
    long toMs;

    @Override
    public Integer call() {
      ProfileReport.write(jfr, out, jfr.getFileName().toString(), CpuEngine.parse("engine", engine),
          ProfileSettings.DEFAULT_CPU_INTERVAL_NS, new ProfileReport.Window(fromMs, toMs));
      System.out.println("profile: " + out.toAbsolutePath());
      return 0;
    }
  }

  /** Entry point: exit status 0 on success, 1 on an error (printed), 2 on bad usage. */
  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new ProfileCommand());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("profile: " + e.getMessage());
      return 1;
    });
    System.exit(cli.execute(args));
  }
}
