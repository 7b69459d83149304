package dev.weir.runner.monitoring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weir.runner.executor.JobExecutor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The live job page in a real browser: headless Chromium (Debian's {@code chromium}, driven by
 * Selenium through Debian's {@code chromedriver}; {@code scripts/install-test-tools.sh} installs
 * both) loads the page of a running streaming job, waits for its numbers to change between polls,
 * and checks what it rendered: every chart drew (the page's own check), the job graph names every
 * stage, the tables list every stage and the counted PTransform, a checkpoint shows. A screenshot is
 * kept as {@code target/job-page-screenshot.png}.
 *
 * <p>Without Chromium and chromedriver, and no way to install them, the test is skipped, unless
 * {@code WEIR_REQUIRE_BROWSER=1} (set by {@code .ci/run}), which makes it fail instead. Runtime: about
 * 15 s (the job runs until the page has shown a checkpoint).
 */
class JobPageBrowserIT {
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static WebDriver browser;

  @TempDir
  static Path state;

  @BeforeAll
  static void startBrowser() throws Exception {
    if (which("chromium") == null || which("chromedriver") == null) {
      Path script = Path.of("..", "..", "scripts", "install-test-tools.sh");
      if (Files.isExecutable(script)) {
        new ProcessBuilder(script.toString()).inheritIO().start().waitFor(10, TimeUnit.MINUTES);
      }
    }
    String chromium = which("chromium");
    String driver = which("chromedriver");
    if ("1".equals(System.getenv("WEIR_REQUIRE_BROWSER"))) {
      assertThat(chromium).as("chromium is required (WEIR_REQUIRE_BROWSER=1) but missing").isNotNull();
      assertThat(driver).as("chromedriver is required (WEIR_REQUIRE_BROWSER=1) but missing").isNotNull();
    }
    assumeTrue(chromium != null && driver != null, "chromium or chromedriver not installed and cannot be installed");
    ChromeOptions options = new ChromeOptions().setBinary(chromium);
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
        "--disable-dev-shm-usage", "--user-data-dir=" + Files.createTempDirectory("weir-chromium"));
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(Path.of(driver).toFile())
        .usingAnyFreePort().build();
    browser = new ChromeDriver(service, options);
    browser.manage().window().setSize(new Dimension(1400, 2000));
  }

  @AfterAll
  static void stopBrowser() {
    if (browser != null) {
      browser.quit();
    }
  }

  @Test
  void thePageOfARunningJobShowsItsGraphAndNumbersThatChange() throws Exception {
    JobExecutor executor = MonitoringHttpTest.startJob(state, "page-" + UUID.randomUUID(), "--metricsHttpPort=0");
    try {
      browser.get(executor.monitoring().httpUrl());
      WebDriverWait wait = new WebDriverWait(browser, DEADLINE, Duration.ofMillis(100));
      wait.until(b -> Integer.parseInt(body().getAttribute("data-updates")) >= 2);
      String firstTotal = text("tile-source-total");
      wait.until(b -> !text("tile-source-total").equals(firstTotal));
      wait.until(b -> !text("tile-checkpoints").startsWith("Checkpoints\n0"));
      wait.until(b -> "ok".equals(body().getAttribute("data-render-status")));

      String graph = html("graph");
      @SuppressWarnings("unchecked")
      List<String> stages = (List<String>) ((JavascriptExecutor) browser).executeScript(
          "return Array.from(document.querySelectorAll('#stages tr.stage')).map(r => r.dataset.stage);");
      assertThat(stages).as("one row per stage").hasSizeGreaterThanOrEqualTo(2);
      for (String stage : stages) {
        assertThat(graph).as("the graph names every stage").contains(stage);
      }
      assertThat(graph).as("the stream between the stages, with its fill").contains("shuffle");
      assertThat(text("transforms")).contains("Counted/ParMultiDo(Counted)").contains("test:counted");
      assertThat(text("tile-source-rate")).doesNotContain("…");
      assertThat(html("checkpoints")).contains("<path");
      assertThat(text("status")).startsWith("live");

      // For the docs' screenshot: -Dweir.jobPage.holdSeconds=30 lets the charts fill first.
      Thread.sleep(TimeUnit.SECONDS.toMillis(Long.getLong("weir.jobPage.holdSeconds", 0)));
      byte[] png = ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES);
      Path shot = Path.of("target", "job-page-screenshot.png");
      Files.createDirectories(shot.getParent());
      Files.write(shot, png);
      assertThat(png.length).as("screenshot bytes").isGreaterThan(50_000);
    } finally {
      executor.cancel();
    }
  }

  private static WebElement body() {
    return browser.findElement(By.tagName("body"));
  }

  /** The rendered text of element {@code id}, read in one script call (the page re-renders every second). */
  private static String text(String id) {
    return String.valueOf(((JavascriptExecutor) browser)
        .executeScript("var e = document.getElementById(arguments[0]); return e ? e.innerText : '';", id));
  }

  /** The inner HTML of element {@code id}, read in one script call. */
  private static String html(String id) {
    return String.valueOf(((JavascriptExecutor) browser)
        .executeScript("var e = document.getElementById(arguments[0]); return e ? e.innerHTML : '';", id));
  }

  private static String which(String name) throws Exception {
    Process p = new ProcessBuilder("sh", "-c", "command -v " + name).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    return p.waitFor() == 0 && !out.isEmpty() ? out : null;
  }
}
