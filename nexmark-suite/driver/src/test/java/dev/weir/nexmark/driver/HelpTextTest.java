// Role: unit test that every `weir` subcommand's --help renders cleanly: picocli formats option
// descriptions with String.format, so a lone '%' in one is printed raw with a warning.
// Threading: single-threaded test; swaps System.err while rendering.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class HelpTextTest {
  @Test
  void everySubcommandsHelpRendersWithoutFormatWarnings() {
    CommandLine weir = new CommandLine(new WeirCli());
    ByteArrayOutputStream warnings = new ByteArrayOutputStream();
    PrintStream err = System.err;
    System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
    StringBuilder usage = new StringBuilder(weir.getUsageMessage());
    try {
      for (CommandLine sub : weir.getSubcommands().values()) {
        usage.append(sub.getUsageMessage());
      }
    } finally {
      System.setErr(err);
    }
    assertThat(warnings.toString(StandardCharsets.UTF_8)).doesNotContain("picocli WARN");
    assertThat(usage.toString()).contains("--profile-precise-frames").contains("some 3% more CPU");
  }
}
