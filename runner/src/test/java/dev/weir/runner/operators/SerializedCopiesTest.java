// Role: unit tests of SerializedCopies: one serialization per transform, a distinct instance per copy.
// Threading: single-threaded tests, plus one that opens copies from several threads at once.
package dev.weir.runner.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SerializedCopiesTest {
  /** Counts how often any instance was serialized. */
  static final AtomicInteger WRITES = new AtomicInteger();

  static final class Fn implements Serializable {
    final List<String> words;

    Fn(List<String> words) {
      this.words = words;
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
      WRITES.incrementAndGet();
      out.defaultWriteObject();
    }
  }

  @Test
  void everyCopyIsANewEqualInstanceFromOneSerialization() {
    WRITES.set(0);
    Fn prototype = new Fn(List.of("a", "b"));
    SerializedCopies<Fn> copies = new SerializedCopies<>(prototype);
    assertThat(WRITES).hasValue(0); // nothing serialized before the first copy

    Fn first = copies.newCopy();
    Fn second = copies.newCopy();

    assertThat(first).isNotSameAs(prototype).isNotSameAs(second);
    assertThat(first.words).isNotSameAs(second.words).containsExactly("a", "b");
    assertThat(second.words).containsExactly("a", "b");
    assertThat(copies.prototype()).isSameAs(prototype);
    assertThat(WRITES).hasValue(1);
  }

  @Test
  void tasksOpeningAtOnceShareOneSerialization() throws Exception {
    WRITES.set(0);
    SerializedCopies<Fn> copies = new SerializedCopies<>(new Fn(List.of("x")));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<Fn>> opens = IntStream.range(0, 16).<Callable<Fn>>mapToObj(i -> copies::newCopy).toList();
      for (Future<Fn> copy : pool.invokeAll(opens)) {
        assertThat(copy.get().words).containsExactly("x");
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(WRITES).hasValue(1);
  }

  @Test
  void aFunctionThatCannotBeSerializedFailsNamingItself() {
    SerializedCopies<Serializable> copies = new SerializedCopies<>(new Holder(new Object()));
    assertThatThrownBy(copies::newCopy)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(Holder.class.getSimpleName());
  }

  /** Serializable on paper, not in fact: its field is not. */
  static final class Holder implements Serializable {
    final Object field;

    Holder(Object field) {
      this.field = field;
    }
  }
}
