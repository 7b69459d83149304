package dev.weir.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.runner.WeirPipelineOptions;
import java.io.IOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code --help=WeirPipelineOptions}, as the README documents it: run in a child JVM on the
 * examples' runtime classpath (Beam prints the help and calls {@code System.exit(0)}), it must
 * list every getter of {@link WeirPipelineOptions} with its description and, where the getter
 * declares one, its default.
 */
class WeirOptionsHelpTest {
  private static String help;

  @BeforeAll
  static void printHelp() throws IOException, InterruptedException {
    Process child = new ProcessBuilder(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"),
        WordCount.class.getName(), "--help=WeirPipelineOptions")
        .redirectErrorStream(true)
        .start();
    help = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(child.exitValue()).as("exit status; output:%n%s", help).isZero();
  }

  @Test
  void listsEveryWeirOptionWithItsDescriptionAndDefault() {
    List<Method> getters = getters();
    assertThat(getters).extracting(WeirOptionsHelpTest::optionName)
        .contains("parallelism", "containers", "stateBackend", "stateDirectory", "maxBundleSize",
            "maxBundleTimeMs", "objectCacheSize", "metricsEnabled");
    for (Method getter : getters) {
      String name = optionName(getter);
      String block = optionBlock(name);
      Description description = getter.getAnnotation(Description.class);
      assertThat(description).as("@Description on %s", getter).isNotNull();
      assertThat(squeeze(block)).as("help for --%s", name).contains(squeeze(description.value()));
      String declaredDefault = declaredDefault(getter);
      if (declaredDefault != null) {
        assertThat(squeeze(block)).as("default of --%s", name).contains("Default: " + declaredDefault);
      }
    }
  }

  @Test
  void namesTheOptionsInterfaceAndItsInheritedOptions() {
    assertThat(help).contains(WeirPipelineOptions.class.getName() + ":")
        .contains("--runner=").contains("--streaming=");
  }

  /** The getters WeirPipelineOptions itself declares (inherited Beam options are Beam's to document). */
  private static List<Method> getters() {
    List<Method> getters = new ArrayList<>();
    for (Method m : WeirPipelineOptions.class.getDeclaredMethods()) {
      if (m.getParameterCount() == 0 && !m.isSynthetic() && !java.lang.reflect.Modifier.isStatic(m.getModifiers())
          && (m.getName().startsWith("get") || m.getName().startsWith("is"))) {
        getters.add(m);
      }
    }
    return getters;
  }

  private static String optionName(Method getter) {
    String bare = getter.getName().substring(getter.getName().startsWith("is") ? 2 : 3);
    return Character.toLowerCase(bare.charAt(0)) + bare.substring(1);
  }

  /** The lines of the help from {@code --name=} up to the next option or blank line. */
  private static String optionBlock(String name) {
    String[] lines = help.split("\\R");
    StringBuilder block = null;
    for (String line : lines) {
      if (block == null) {
        if (line.startsWith("  --" + name + "=")) {
          block = new StringBuilder(line);
        }
      } else if (line.isBlank() || line.startsWith("  --")) {
        break;
      } else {
        block.append('\n').append(line);
      }
    }
    assertThat(block).as("--%s in the help:%n%s", name, help).isNotNull();
    return block.toString();
  }

  /**
   * What Beam prints after "Default: " for the getter's {@code @Default.*} annotation: the value,
   * or the simple name of a {@code @Default.InstanceFactory}'s class; null without one.
   */
  private static String declaredDefault(Method getter) {
    for (Annotation a : getter.getAnnotations()) {
      Class<? extends Annotation> type = a.annotationType();
      if (type.getEnclosingClass() != Default.class) {
        continue;
      }
      if (a instanceof Default.InstanceFactory factory) {
        return factory.value().getSimpleName();
      }
      try {
        Object value = type.getMethod("value").invoke(a);
        return value instanceof Class<?> c ? c.getSimpleName() : String.valueOf(value);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError("cannot read " + a, e);
      }
    }
    return null;
  }

  /** Collapses the help's line wrapping. */
  private static String squeeze(String text) {
    return text.replaceAll("\\s+", " ").trim();
  }
}
