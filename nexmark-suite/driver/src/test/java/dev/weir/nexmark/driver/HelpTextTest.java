// Role: unit test that the help of every `weir` command bin/weir dispatches to renders cleanly:
// picocli formats descriptions with String.format, so a lone '%' in one is printed raw with a
// warning. Covers `weir nexmark` (WeirCli) and `weir profile` (the profiling module's command).
// Threading: single-threaded test; swaps System.err while rendering.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.profiling.ProfileCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class HelpTextTest {
  @Test
  void everyCommandsHelpRendersWithoutFormatWarnings() {
    ByteArrayOutputStream warnings = new ByteArrayOutputStream();
    PrintStream err = System.err;
    System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
    StringBuilder usage = new StringBuilder();
    try {
      for (CommandLine command : new CommandLine[] {new CommandLine(new WeirCli()), new CommandLine(new ProfileCommand())}) {
        usage.append(command.getUsageMessage());
        for (CommandLine sub : command.getSubcommands().values()) {
          usage.append(sub.getUsageMessage());
        }
      }
    } finally {
      System.setErr(err);
    }
    assertThat(warnings.toString(StandardCharsets.UTF_8)).doesNotContain("picocli WARN");
    assertThat(usage.toString())
        .contains("--profile-precise-frames", "--precise-frames")
        .contains("some 3% more CPU");
  }
}
