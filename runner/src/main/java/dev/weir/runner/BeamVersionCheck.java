package dev.weir.runner;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.sdk.util.ReleaseInfo;

/**
 * Refuses to run a pipeline whose Beam release is not the one this Weir build is compiled for,
 * before anything runs, with one message naming both versions and the Weir artifact to use.
 *
 * <p>Why: Beam's runner-facing API changes between minors without a compile-time signal for the
 * pipeline author. A runner built on runners-core 2.70 with a 2.73 or newer SDK on the classpath
 * fails deep inside a job, at the first timer ({@code NoSuchMethodError}: 2.73's
 * {@code DoFnRunner.onTimer} takes a drain cause) or the first output ({@code AbstractMethodError}:
 * 2.75's output receivers call a method 2.70's {@code SimpleDoFnRunner} lacks). Beam releases are
 * compatible within a minor, so the check compares {@code major.minor}.
 *
 * <p>What is compared: the SDK's version ({@link ReleaseInfo}, from {@code beam-sdks-java-core}) and,
 * where its jar says, the version of {@code beam-runners-core-java} on the classpath (Maven's
 * nearest-wins can leave it behind the SDK), against the Beam version in this build's
 * {@code weir-build.properties}, written by the build of each supported minor (runner/pom.xml).
 *
 * <p>Threading: stateless; {@link #check()} may be called from any thread.
 */
public final class BeamVersionCheck {
  /** One Weir artifact and the Beam minor it is built for. */
  public record Build(String beamMinor, String artifactId) {
    @Override
    public String toString() {
      return "Beam " + beamMinor + ": dev.weir:" + artifactId;
    }
  }

  /** Every Beam minor Weir has a build for (runner/beam&lt;minor&gt;/pom.xml), oldest first. */
  public static final List<Build> SUPPORTED = List.of(
      new Build("2.70", "weir-runner"),
      new Build("2.73", "weir-runner-beam2.73"));

  private static final String BUILD_PROPERTIES = "weir-build.properties";
  private static final String RUNNERS_CORE_POM =
      "META-INF/maven/org.apache.beam/beam-runners-core-java/pom.properties";

  private BeamVersionCheck() {}

  /**
   * Checks the classpath's Beam against this build's.
   *
   * @throws IllegalStateException naming the SDK's version, this build's Beam version and artifact,
   *     and the Weir artifact for the SDK's minor (or the supported minors when there is none)
   */
  public static void check() {
    Properties build = buildProperties();
    mismatch(ReleaseInfo.getReleaseInfo().getSdkVersion(), runnersCoreVersion().orElse(null),
        build.getProperty("beam.version"), build.getProperty("artifactId"), build.getProperty("version"))
        .ifPresent(message -> {
          throw new IllegalStateException(message);
        });
  }

  /** The Beam version this build is compiled against, e.g. {@code 2.73.0}. */
  public static String builtBeamVersion() {
    return buildProperties().getProperty("beam.version");
  }

  /**
   * This Weir build, e.g. {@code dev.weir:weir-runner:0.1.0 for Beam 2.70.0}: what a job records
   * to refuse a restart on another Weir (snapshots of one version are not told apart).
   */
  public static String weirBuild() {
    Properties build = buildProperties();
    return "dev.weir:" + build.getProperty("artifactId") + ":" + build.getProperty("version") + " for Beam "
        + build.getProperty("beam.version");
  }

  /**
   * The message for a classpath whose Beam differs from the build's, or empty when they agree.
   *
   * @param sdkVersion the SDK's version, e.g. {@code 2.73.0}
   * @param runnersCoreVersion runners-core's version, or null when its jar does not say
   * @param builtVersion the Beam version this Weir build is compiled against
   * @param artifactId this build's artifact, e.g. {@code weir-runner}
   * @param weirVersion this build's version, e.g. {@code 0.1.0}
   */
  static Optional<String> mismatch(String sdkVersion, String runnersCoreVersion, String builtVersion,
      String artifactId, String weirVersion) {
    String built = minor(builtVersion);
    String sdk = minor(sdkVersion);
    String weir = "dev.weir:" + artifactId + ":" + weirVersion;
    if (!sdk.equals(built)) {
      Optional<Build> other = SUPPORTED.stream().filter(b -> b.beamMinor().equals(sdk)).findFirst();
      String advice = other
          .map(b -> "Use dev.weir:" + b.artifactId() + " (Weir for Beam " + b.beamMinor() + ") instead of "
              + artifactId + ", or build the pipeline against Beam " + builtVersion + ".")
          .orElse("Weir has no build for Beam " + sdk + "; build the pipeline against a Beam release Weir "
              + "supports (" + SUPPORTED.stream().map(Build::toString).collect(Collectors.joining(", ")) + ").");
      return Optional.of("Beam version mismatch: the pipeline's classpath has Beam SDK " + sdkVersion
          + " (beam-sdks-java-core), but " + weir + " is built for Beam " + builtVersion + ". " + advice);
    }
    if (runnersCoreVersion != null && !minor(runnersCoreVersion).equals(built)) {
      return Optional.of("Beam version mismatch: the pipeline's classpath has beam-runners-core-java "
          + runnersCoreVersion + " beside Beam SDK " + sdkVersion + ", but " + weir + " is built for Beam "
          + builtVersion + ". Depend on beam-runners-core-java " + builtVersion
          + " (or import beam-sdks-java-bom " + sdkVersion + ").");
    }
    return Optional.empty();
  }

  /** {@code 2.73} of {@code 2.73.0} or {@code 2.73.0-SNAPSHOT}; the whole string if it has no second dot. */
  static String minor(String version) {
    int first = version.indexOf('.');
    int second = first < 0 ? -1 : version.indexOf('.', first + 1);
    return second < 0 ? version : version.substring(0, second);
  }

  private static Properties buildProperties() {
    Properties p = new Properties();
    try (InputStream in = BeamVersionCheck.class.getResourceAsStream(BUILD_PROPERTIES)) {
      if (in == null) {
        throw new IllegalStateException("Weir's " + BUILD_PROPERTIES + " is missing from the classpath beside "
            + BeamVersionCheck.class.getName() + "; the weir-runner jar is damaged");
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read Weir's " + BUILD_PROPERTIES, e);
    }
    return p;
  }

  /** The version in the pom.properties of the jar that holds runners-core's {@link DoFnRunner}, if any. */
  private static Optional<String> runnersCoreVersion() {
    URL cls = DoFnRunner.class.getResource("DoFnRunner.class");
    if (cls == null || !"jar".equals(cls.getProtocol())) {
      return Optional.empty();
    }
    String url = cls.toString();
    String jar = url.substring(0, url.indexOf("!/") + 2);
    try (InputStream in = new URL(jar + RUNNERS_CORE_POM).openStream()) {
      Properties p = new Properties();
      p.load(in);
      return Optional.ofNullable(p.getProperty("version"));
    } catch (IOException e) {
      return Optional.empty(); // a repackaged jar without Maven metadata: the SDK check stands alone
    }
  }
}
