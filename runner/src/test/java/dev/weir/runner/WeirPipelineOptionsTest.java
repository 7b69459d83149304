package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How users' option values are parsed, and checked once at {@code run()} ({@link WeirSettings}):
 * each bad value fails with an {@link IllegalArgumentException} naming the option and what is
 * allowed, before anything runs.
 */
class WeirPipelineOptionsTest {

  private static WeirPipelineOptions parse(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(WeirPipelineOptions.class);
  }

  @Test
  void stateBackend_acceptsTheDocumentedLowerCaseNames() {
    assertThat(parse("--stateBackend=rocksdb").getStateBackend()).isEqualTo(dev.weir.state.StateBackend.ROCKSDB);
    assertThat(parse("--stateBackend=memory").getStateBackend()).isEqualTo(dev.weir.state.StateBackend.MEMORY);
    assertThat(parse("--stateBackend=MEMORY").getStateBackend()).isEqualTo(dev.weir.state.StateBackend.MEMORY);
    assertThat(parse().getStateBackend()).isEqualTo(dev.weir.state.StateBackend.ROCKSDB);
  }

  @Test
  void stateBackend_badValue_namesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> parse("--stateBackend=redis"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasStackTraceContaining("--stateBackend=redis")
        .hasStackTraceContaining("rocksdb, memory");
  }

  /** Runs a one-element pipeline with {@code args} the way a user would. */
  private static void run(String... args) {
    Pipeline p = Pipeline.create(parse(args));
    p.apply(Create.of(1, 2, 3));
    p.run().waitUntilFinish();
  }

  @Test
  void parallelism_zero_failsAtRunNamingTheOptionAndTheRange() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--parallelism=0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--parallelism=0 is out of range; allowed: 1 to 2147483647");
  }

  @Test
  void containers_negative_failsNamingTheOptionAndTheRange() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--containers=-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--containers=-1 is out of range; allowed: 1 to 2147483647");
  }

  @Test
  void maxBundleSize_negative_failsNamingTheOptionAndTheRange() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--maxBundleSize=-3"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--maxBundleSize=-3 is out of range; allowed: 1 to 2147483647");
  }

  @Test
  void maxBundleTimeMs_zeroOrTooLargeForNanoseconds_failsNamingTheOptionAndTheRange() {
    String range = "allowed: 1 to " + WeirSettings.MAX_BUNDLE_TIME_MS + " (milliseconds)";
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--maxBundleTimeMs=0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--maxBundleTimeMs=0 is out of range; " + range);
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--maxBundleTimeMs=" + Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--maxBundleTimeMs=" + Long.MAX_VALUE + " is out of range; " + range);
  }

  @Test
  void objectCacheSize_zero_failsNamingTheOptionAndTheRange() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--objectCacheSize=0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--objectCacheSize=0 is out of range; allowed: 1 to " + Long.MAX_VALUE + " (entries)");
  }

  @Test
  void objectCacheBytes_zero_failsNamingTheOptionAndTheRange() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--objectCacheBytes=0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--objectCacheBytes=0 is out of range; allowed: 1 to " + Long.MAX_VALUE + " (bytes)");
  }

  @Test
  void metricsLogIntervalMs_negative_failsNamingTheOptionAndTheRange() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--metricsLogIntervalMs=-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--metricsLogIntervalMs=-1 is out of range; allowed: 0 (no metrics log) or 1 to "
            + Long.MAX_VALUE + " (milliseconds between two logged summaries)");
    assertThat(WeirSettings.from(parse()).metricsLogIntervalMs()).as("off by default").isZero();
  }

  @Test
  void objectCacheEviction_defaultsToLru_andReachesTheCacheSettings() {
    assertThat(parse().getObjectCacheEviction()).isEqualTo(dev.weir.state.cache.ObjectCacheSettings.Eviction.LRU);
    assertThat(WeirSettings.from(parse("--objectCacheEviction=W_TINY_LFU")).objectCacheBounds().eviction())
        .isEqualTo(dev.weir.state.cache.ObjectCacheSettings.Eviction.W_TINY_LFU);
  }

  @Test
  void objectCacheEviction_badOrUnset_namesTheOptionAndTheAllowedValues() {
    assertThatThrownBy(() -> parse("--objectCacheEviction=FIFO"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasStackTraceContaining("objectCacheEviction")
        .hasStackTraceContaining("LRU")
        .hasStackTraceContaining("W_TINY_LFU");
    WeirPipelineOptions options = parse("--runner=WeirRunner");
    options.setObjectCacheEviction(null);
    assertThatThrownBy(() -> WeirSettings.from(options))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--objectCacheEviction is not set; allowed values: LRU, W_TINY_LFU");
  }

  @Test
  void stateBackend_unset_failsNamingTheOptionAndTheAllowedValues() {
    WeirPipelineOptions options = parse("--runner=WeirRunner");
    options.setStateBackend(null);
    assertThatThrownBy(() -> WeirSettings.from(options))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--stateBackend is not set; allowed values: rocksdb, memory");
  }

  @Test
  void stateDirectory_thatCannotBeCreated_failsAtRunNamingTheOption() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--stateBackend=rocksdb", "--stateDirectory=/proc/nope"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--stateDirectory=/proc/nope cannot be created (")
        .hasMessageEndingWith("allowed: a writable directory, created if missing (used by --stateBackend=rocksdb)");
  }

  @Test
  void stateDirectory_aFile_failsNamingTheOption(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--stateBackend=rocksdb", "--stateDirectory=" + file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--stateDirectory=" + file + " cannot be created (FileAlreadyExistsException");
  }

  @Test
  void stateDirectory_empty_failsNamingTheOption() {
    assertThatThrownBy(() -> run("--runner=WeirRunner", "--stateBackend=rocksdb", "--stateDirectory="))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--stateDirectory is empty; allowed: a writable directory");
  }

  @Test
  void stateDirectory_isOnlyCheckedForRocksDb(@TempDir Path dir) {
    WeirSettings settings = WeirSettings.from(parse("--stateBackend=memory", "--stateDirectory=/proc/nope"));
    assertThat(settings.stateBackend()).isEqualTo(dev.weir.state.StateBackend.MEMORY);
    Path created = dir.resolve("a/b");
    WeirSettings rocks = WeirSettings.from(parse("--stateBackend=rocksdb", "--stateDirectory=" + created));
    assertThat(rocks.stateDirectory()).isEqualTo(created);
    assertThat(created).isDirectory();
  }

  @Test
  void settings_carryEveryOptionsValue() {
    WeirSettings settings = WeirSettings.from(parse("--parallelism=3", "--containers=2", "--maxBundleSize=64",
        "--maxBundleTimeMs=250", "--stateBackend=memory", "--objectCacheSize=10", "--objectCacheBytes=4096", "--metricsEnabled=false",
        "--metricsLogIntervalMs=5000", "--weirEnforceEncodability=true"));
    assertThat(settings.parallelism()).isEqualTo(3);
    assertThat(settings.containers()).isEqualTo(2);
    assertThat(settings.maxBundleSize()).isEqualTo(64);
    assertThat(settings.maxBundleTimeMs()).isEqualTo(250);
    assertThat(settings.stateBackend()).isEqualTo(dev.weir.state.StateBackend.MEMORY);
    assertThat(settings.objectCacheSize()).isEqualTo(10);
    assertThat(settings.objectCacheBytes()).isEqualTo(4096);
    assertThat(settings.objectCacheBounds()).isEqualTo(dev.weir.state.cache.ObjectCacheSettings.bounded(10, 4096));
    assertThat(settings.metricsEnabled()).isFalse();
    assertThat(settings.metricsLogIntervalMs()).isEqualTo(5000);
    assertThat(settings.enforceEncodability()).isTrue();
    assertThat(WeirSettings.from(parse("--stateBackend=memory")).enforceEncodability()).isFalse();
  }

  @Test
  void everyOptionHasADescriptionAndADefault() throws Exception {
    for (java.lang.reflect.Method getter : WeirPipelineOptions.class.getDeclaredMethods()) {
      if (!getter.getName().startsWith("get")) {
        continue;
      }
      assertThat(getter.getAnnotation(org.apache.beam.sdk.options.Description.class)).as(getter.getName())
          .isNotNull();
      boolean hasDefault = false;
      for (java.lang.annotation.Annotation a : getter.getAnnotations()) {
        hasDefault |= a.annotationType().getEnclosingClass() == org.apache.beam.sdk.options.Default.class;
      }
      // --metricsHttpPort: unset means "no server", and no port number says that as well;
      // --concurrentParDos: unset means "every ParDo that may", which no list of names says.
      assertThat(hasDefault || getter.getName().equals("getMetricsHttpPort")
          || getter.getName().equals("getConcurrentParDos"))
          .as(getter.getName() + " has a @Default").isTrue();
    }
  }

  @Test
  void help_listsEveryOptionWithItsDefault() {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    PipelineOptionsFactory.printHelp(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
        WeirPipelineOptions.class);
    String help = out.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(help)
        .contains("--containers=<int>\n    Default: AvailableProcessors")
        .contains("--maxBundleSize=<int>\n    Default: 1000")
        .contains("--maxBundleTimeMs=<long>\n    Default: 1000")
        .contains("--metricsEnabled=<boolean>\n    Default: true")
        .contains("--objectCacheSize=<long>\n    Default: 10000")
        .contains("--objectCacheBytes=<long>\n    Default: 67108864")
        .contains("--objectCacheEviction=<LRU | W_TINY_LFU>\n    Default: LRU")
        .contains("--parallelism=<int>\n    Default: AvailableProcessors")
        .contains("--stateBackend=<ROCKSDB | MEMORY>\n    Default: ROCKSDB")
        .contains("--stateDirectory=<String>\n    Default: TempStateDirectory")
        .contains("--weirEnforceEncodability=<boolean>\n    Default: false");
  }
}
