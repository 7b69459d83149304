package dev.weir.dashboards;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/weir report}: rebuilds the comparative HTML report from any set of results files
 * (and, optionally, InfluxDB line protocol and a Grafana dashboard). Runs on the caller's thread.
 */
@Command(name = "report", mixinStandardHelpOptions = true,
    description = "Writes the comparative runner report (one self-contained HTML file) from Nexmark results.json files.")
public final class ReportCommand implements Callable<Integer> {

  @Parameters(arity = "1..*", paramLabel = "RESULTS",
      description = "results.json files, or folders searched for them (e.g. results/)")
  List<Path> inputs;

  @Option(names = "--out", paramLabel = "FILE",
      description = "The HTML report to write (default: report.html next to the newest results file)")
  Path out;

  @Option(names = "--influx", paramLabel = "FILE",
      description = "Also write InfluxDB line protocol (Beam's nexmark_<query>_<mode> naming) to FILE")
  Path influx;

  @Option(names = "--grafana", paramLabel = "FILE",
      description = "Also write a Grafana dashboard (InfluxQL over the --influx measurements) to FILE")
  Path grafana;

  @Override
  public Integer call() throws IOException {
    List<ResultsFile> files = ResultsFile.readAll(inputs);
    List<LatencyFile> latency = LatencyFile.readAll(inputs);
    if (files.isEmpty()) {
      System.err.println("report: no Nexmark results.json (from bin/weir nexmark) found in " + inputs
          + (latency.isEmpty() ? "" : "; latency results are reported beside a Nexmark comparison"));
      return 2;
    }
    List<ResultsFile> ordered = Comparison.chronological(files);
    Path target = out != null ? out
        : ordered.get(ordered.size() - 1).path().toAbsolutePath().resolveSibling("report.html");
    new HtmlReport(echartsVersion()).write(files, LatencyFile.newest(latency), target);
    System.out.println("report: " + target.toAbsolutePath() + " (" + files.size() + " results file"
        + (files.size() == 1 ? "" : "s") + ")");
    if (influx != null) {
      Files.write(influx, InfluxExport.lines(files), StandardCharsets.UTF_8);
      System.out.println("influx line protocol: " + influx.toAbsolutePath());
    }
    if (grafana != null) {
      try (InputStream in = ReportCommand.class.getResourceAsStream("grafana-dashboard.json")) {
        Files.write(grafana, in.readAllBytes());
      }
      System.out.println("grafana dashboard: " + grafana.toAbsolutePath());
    }
    return 0;
  }

  /** The version of the ECharts WebJar on the classpath, from its Maven metadata. */
  static String echartsVersion() {
    try (InputStream in = ReportCommand.class.getClassLoader()
        .getResourceAsStream("META-INF/maven/org.webjars/echarts/pom.properties")) {
      if (in == null) {
        throw new IllegalStateException("Apache ECharts (org.webjars:echarts) is not on the classpath");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the ECharts WebJar version", e);
    }
  }

  /** Entry point: exits with 0 on success, 1 on an error (printed), 2 on bad usage. */
  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new ReportCommand());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("report: " + e.getMessage());
      return 1;
    });
    System.exit(cli.execute(args));
  }
}
