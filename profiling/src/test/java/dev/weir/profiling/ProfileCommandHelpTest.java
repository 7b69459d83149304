// Role: unit test that `weir profile`'s help, and each of its subcommands', renders cleanly:
// picocli formats descriptions with String.format, so a lone '%' in one is printed raw with a warning.
// Threading: single-threaded test; swaps System.err while rendering.
package dev.weir.profiling;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ProfileCommandHelpTest {
  @Test
  void helpOfEverySubcommandRendersWithoutFormatWarnings() {
    CommandLine profile = new CommandLine(new ProfileCommand());
    ByteArrayOutputStream warnings = new ByteArrayOutputStream();
    PrintStream err = System.err;
    System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
    String usage;
    try {
      usage = profile.getUsageMessage() + profile.getSubcommands().values().stream()
          .map(CommandLine::getUsageMessage).reduce("", String::concat);
    } finally {
      System.setErr(err);
    }
    assertThat(warnings.toString(StandardCharsets.UTF_8)).doesNotContain("picocli WARN");
    assertThat(usage).contains("--precise-frames").contains("some 3% more CPU");
  }
}
