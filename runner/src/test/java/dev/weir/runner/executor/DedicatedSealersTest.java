package dev.weir.runner.executor;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How many sealer threads of its own a job starts ({@code --backgroundSealing}). */
class DedicatedSealersTest {
  @ParameterizedTest(name = "{0} cores, {1} containers -> {2}")
  @CsvSource({
      "2,2,0", // every core runs a container: only idle run loops seal
      "2,1,1", // one spare core
      "4,3,1",
      "64,2,2", // at most one per container, however many cores are spare
      "1,4,0"})
  void oneThreadPerSpareCore_atMostOnePerContainer(int cores, int containers, int expected) {
    assertThat(JobExecutor.dedicatedSealers(cores, containers)).isEqualTo(expected);
  }
}
