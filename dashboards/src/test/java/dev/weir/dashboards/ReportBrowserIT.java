package dev.weir.dashboards;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Renders a report of 15 queries x 3 runners (two results files and a sweep) in headless Chromium
 * (Debian's {@code chromium}; {@code scripts/install-test-tools.sh} installs it), keeps a screenshot
 * as {@code target/report-screenshot.png}, and checks from the rendered DOM that every chart drew
 * (the page's own self-check) and every query label is on the throughput chart.
 *
 * <p>Without Chromium and without a way to install it, the test is skipped, unless
 * {@code WEIR_REQUIRE_BROWSER=1} (set by {@code .ci/run}), which makes it fail instead.
 */
class ReportBrowserIT {

  private static final Path TARGET = Path.of("target");
  private static String chromium;

  @BeforeAll
  static void findChromium() throws Exception {
    chromium = which("chromium");
    if (chromium == null) {
      Path script = Path.of("..", "scripts", "install-test-tools.sh");
      if (Files.isExecutable(script)) {
        new ProcessBuilder(script.toString()).inheritIO().start().waitFor(10, TimeUnit.MINUTES);
      }
      chromium = which("chromium");
    }
    boolean required = "1".equals(System.getenv("WEIR_REQUIRE_BROWSER"));
    if (required) {
      assertThat(chromium).as("chromium is required (WEIR_REQUIRE_BROWSER=1) but missing").isNotNull();
    }
    assumeTrue(chromium != null, "chromium not installed and cannot be installed here");
  }

  private static String which(String name) throws Exception {
    Process p = new ProcessBuilder("sh", "-c", "command -v " + name).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    return p.waitFor() == 0 && !out.isEmpty() ? out : null;
  }

  private static List<String> chromiumArgs(Path profile) {
    return new ArrayList<>(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--hide-scrollbars", "--user-data-dir=" + profile.toAbsolutePath(), "--virtual-time-budget=10000"));
  }

  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("chromium finished").isTrue();
    return out;
  }

  @Test
  void report_rendersEveryChart_andEveryQueryLabel() throws Exception {
    Path work = Files.createDirectories(TARGET.resolve("browser-it"));
    ResultsFile a = ResultsFile.read(SampleResults.fullComparison("2026-11-20T10:00:00Z", 2.0).write(work.resolve("r1")));
    SampleResults latest = SampleResults.fullComparison("2026-11-21T10:00:00Z", 3.0);
    for (String v : List.of("10", "100", "1000")) {
      latest.run("weir", 0, "streaming", "ok", 2000.0 * v.length(), 1L, null, Map.of("maxBundleSize", v));
      latest.run("flink", 0, "streaming", "ok", 3000.0, 1L, null, Map.of("maxBundleSize", v));
    }
    ResultsFile b = ResultsFile.read(latest.write(work.resolve("r2")));
    Path report = work.resolve("report.html");
    new HtmlReport(ReportCommand.echartsVersion()).write(List.of(a, b), report);
    String url = report.toAbsolutePath().toUri().toString();

    List<String> dump = chromiumArgs(work.resolve("profile-dom"));
    dump.add("--dump-dom");
    dump.add(url);
    String dom = run(dump);

    Matcher status = Pattern.compile("data-render-status=\"(\\w+)\"").matcher(dom);
    assertThat(status.find()).as("the page's script ran and recorded a render status").isTrue();
    Matcher detail = Pattern.compile("data-render-detail=\"([^\"]*)\"").matcher(dom);
    assertThat(detail.find()).isTrue();
    assertThat(status.group(1)).as("render detail: %s", detail.group(1)).isEqualTo("ok");
    // 1 throughput chart + 15 history charts + 1 sweep chart (a line per runner), each an SVG with shapes.
    assertThat(detail.group(1)).contains("&quot;charts&quot;:17");
    for (int q = 0; q <= 14; q++) {
      assertThat(dom).contains(">Q" + q + "</text>");
    }

    List<String> shot = chromiumArgs(work.resolve("profile-shot"));
    Path png = TARGET.resolve("report-screenshot.png").toAbsolutePath();
    shot.add("--window-size=1400,2600");
    shot.add("--screenshot=" + png);
    shot.add(url);
    run(shot);
    assertThat(png).exists();
    assertThat(Files.size(png)).as("screenshot bytes").isGreaterThan(50_000);
  }
}
