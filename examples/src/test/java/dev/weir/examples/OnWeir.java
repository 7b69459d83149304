package dev.weir.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Test helper: the command-line arguments every example test runs with on Weir. */
final class OnWeir {
  private OnWeir() {}

  /**
   * {@code --runner=WeirRunner}, small and fast settings (2 partitions, 2 container threads,
   * state in memory) followed by {@code extra}: the same options a user passes on the command line.
   */
  static String[] args(String... extra) {
    List<String> args = new ArrayList<>(List.of(
        "--runner=WeirRunner", "--parallelism=2", "--containers=2", "--stateBackend=MEMORY"));
    args.addAll(Arrays.asList(extra));
    return args.toArray(new String[0]);
  }
}
