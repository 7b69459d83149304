package dev.weir.profiling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ProfileSummaryTest {

  private static FrameCategory cat(String stack) {
    return ProfileSummary.categorize(stack.split(";"));
  }

  @Test
  void categorize_gcAndRocksDbWinWherever_theyAppear() {
    assertThat(cat("GCTaskThread::run;G1ParEvacuateFollowersClosure::do_void_[j]")).isEqualTo(FrameCategory.GC);
    assertThat(cat("dev.weir.runner.executor.Container.run_[j];org.rocksdb.RocksDB.get_[j];rocksdb::DBImpl::Get"))
        .isEqualTo(FrameCategory.ROCKSDB);
  }

  @Test
  void categorize_codersAnywhere_beatTheCaller() {
    assertThat(cat("dev.weir.runner.X.run_[j];org.apache.beam.sdk.coders.VarLongCoder.encode_[j];java.io.OutputStream.write_[j]"))
        .isEqualTo(FrameCategory.CODERS);
    assertThat(cat("dev.weir.X.y_[j];org.apache.beam.sdk.util.CoderUtils.decodeFromByteArray_[i]"))
        .isEqualTo(FrameCategory.CODERS);
  }

  @Test
  void categorize_firstNonPlatformFrameFromTheLeaf_decides() {
    assertThat(cat("dev.weir.runner.executor.Container.run_[j];java.util.HashMap.get_[j]")).isEqualTo(FrameCategory.WEIR);
    assertThat(cat("dev.weir.Container.run_[j];org.apache.beam.runners.core.SimpleDoFnRunner.processElement_[j]"))
        .isEqualTo(FrameCategory.BEAM);
    assertThat(cat("org.apache.beam.runners.core.SimpleDoFnRunner.processElement_[j];com.example.MyDoFn.process_[j];java.lang.Math.sin_[j]"))
        .isEqualTo(FrameCategory.USER);
    assertThat(cat("org.apache.beam.sdk.Foo.x_[j];org.apache.beam.sdk.nexmark.queries.Query3$1.processElement_[j]"))
        .isEqualTo(FrameCategory.USER);
    assertThat(cat("org.apache.flink.streaming.runtime.tasks.StreamTask.invoke_[j];java.lang.Object.wait_[j]"))
        .isEqualTo(FrameCategory.PEER_RUNNER);
    assertThat(cat("thread_start;JavaThread::run;CompileBroker::compiler_thread_loop")).isEqualTo(FrameCategory.JVM_AND_OTHER);
  }

  @Test
  void of_countsSelfFramesAndShares() {
    ProfileSummary s = ProfileSummary.of(Stream.of(
        "dev.weir.A.run_[j];dev.weir.B.hot_[j] 70",
        "dev.weir.A.run_[j];org.apache.beam.sdk.coders.StringUtf8Coder.encode_[j] 20",
        "com.example.Fn.process_[j] 10",
        "garbage line",
        ""), 2);
    assertThat(s.totalSamples()).isEqualTo(100);
    assertThat(s.topSelf()).extracting(ProfileSummary.FrameCount::frame)
        .containsExactly("dev.weir.B.hot", "org.apache.beam.sdk.coders.StringUtf8Coder.encode");
    assertThat(s.share(FrameCategory.WEIR)).isEqualTo(0.7);
    assertThat(s.share(FrameCategory.CODERS)).isEqualTo(0.2);
    assertThat(s.share(FrameCategory.USER)).isEqualTo(0.1);
    assertThat(s.render("t")).contains("weir").contains("70.0%").contains("dev.weir.B.hot");
  }

  @Test
  void engineParse_namesTheOptionAndAllowedValues() {
    assertThat(CpuEngine.parse("engine", "CTIMER")).isEqualTo(CpuEngine.CTIMER);
    assertThatThrownBy(() -> CpuEngine.parse("engine", "wall"))
        .hasMessageContaining("--engine=wall").hasMessageContaining("cpu, ctimer, itimer");
  }

  @Test
  void settings_buildTheAgentArguments() {
    ProfileSettings s = ProfileSettings.defaults(CpuEngine.CTIMER, java.nio.file.Path.of("/tmp/x.jfr"));
    assertThat(s.startArguments())
        .isEqualTo("start,event=ctimer,interval=10000000,jfrsync=/tmp/x.jfr.jfc,file=/tmp/x.jfr");
    assertThat(new ProfileSettings(CpuEngine.CTIMER, 10_000_000L, 0, false, java.nio.file.Path.of("/tmp/x.jfr"))
        .startArguments()).as("no allocation samples").isEqualTo("start,event=ctimer,interval=10000000,jfr,file=/tmp/x.jfr");
    assertThat(s.agentOption(java.nio.file.Path.of("/lib/libasyncProfiler.so")))
        .startsWith("-agentpath:/lib/libasyncProfiler.so=start,event=ctimer");
  }

  @Test
  void allocationSettings_enableOnlyJfrsAllocationSampleAtTheRate(@org.junit.jupiter.api.io.TempDir
      java.nio.file.Path dir) throws Exception {
    ProfileSettings s = new ProfileSettings(CpuEngine.CTIMER, 10_000_000L, 250, false, dir.resolve("p/profile.jfr"));
    s.writeAllocationSettings();
    String jfc = java.nio.file.Files.readString(s.allocationSettings());
    assertThat(s.allocationSettings()).isEqualTo(dir.resolve("p/profile.jfr.jfc"));
    assertThat(jfc).contains("<event name=\"jdk.ObjectAllocationSample\">")
        .contains("<setting name=\"throttle\">250/s</setting>")
        .contains("<setting name=\"stackTrace\">true</setting>");
    assertThat(jfc.split("<event ", -1)).as("one event only").hasSize(2);
  }

  @Test
  void settings_keepDebugNonSafepointsOffUnlessPreciseFramesAreAsked() {
    ProfileSettings cheap = ProfileSettings.defaults(CpuEngine.CTIMER, java.nio.file.Path.of("/tmp/x.jfr"));
    java.nio.file.Path lib = java.nio.file.Path.of("/lib/libasyncProfiler.so");
    // set on the command line before the agent loads, so async-profiler leaves the flag as it is
    assertThat(cheap.jvmOptions(lib)).containsExactly("-XX:+UnlockDiagnosticVMOptions", "-XX:-DebugNonSafepoints",
        cheap.agentOption(lib));
    ProfileSettings precise = cheap.withPreciseFrames(true);
    assertThat(precise.jvmOptions(lib)).containsExactly(precise.agentOption(lib));
    assertThat(precise.startArguments()).isEqualTo(cheap.startArguments());
  }
}
