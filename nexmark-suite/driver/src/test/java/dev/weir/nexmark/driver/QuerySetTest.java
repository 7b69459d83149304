// Role: unit tests of --queries parsing. Threading: single-threaded JUnit tests.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class QuerySetTest {
  @Test
  void rangeCoversBothEnds() {
    assertThat(QuerySet.parse("0-14")).hasSize(15).startsWith(0).endsWith(14);
  }

  @Test
  void listsAndRangesMixKeepOrderAndDropDuplicates() {
    assertThat(QuerySet.parse("5, 0-2,1,13")).containsExactly(5, 0, 1, 2, 13);
    assertThat(QuerySet.parse("7")).containsExactly(7);
    assertThat(QuerySet.parse("3-3")).containsExactly(3);
  }

  @Test
  void rejectsBadInput() {
    assertThatThrownBy(() -> QuerySet.parse("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> QuerySet.parse("5-2")).hasMessageContaining("reversed");
    assertThatThrownBy(() -> QuerySet.parse("0-17")).hasMessageContaining("outside");
    assertThatThrownBy(() -> QuerySet.parse("-1")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> QuerySet.parse("a")).hasMessageContaining("not a query number");
    assertThatThrownBy(() -> QuerySet.parse("1,,2")).hasMessageContaining("empty");
  }

  @Test
  void namesFollowBeamNumbering() {
    assertThat(QuerySet.name(13)).isEqualTo("BOUNDED_SIDE_INPUT_JOIN");
    assertThat(QuerySet.name(14)).isEqualTo("SESSION_SIDE_INPUT_JOIN");
    assertThat(QuerySet.name(0)).isEqualTo("PASSTHROUGH");
  }
}
