package dev.weir.runner.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

class NamespaceMapTest {
  private static final org.apache.beam.sdk.coders.Coder<IntervalWindow> CODER = IntervalWindow.getCoder();

  private static IntervalWindow window(long startMs, long endMs) {
    return new IntervalWindow(new Instant(startMs), new Instant(endMs));
  }

  private static StateNamespace ns(long startMs, long endMs) {
    return StateNamespaces.window(CODER, window(startMs, endMs)); // a new window object each time
  }

  private static StateNamespace nsTrigger(long startMs, long endMs, int index) {
    return StateNamespaces.windowAndTrigger(CODER, window(startMs, endMs), index);
  }

  @Test
  void findsAWindowNamespaceByAnEqualWindowNotTheSameObject() {
    NamespaceMap<String> map = new NamespaceMap<>(CODER);
    map.put(ns(0, 10), "a");

    assertThat(map.get(ns(0, 10))).isEqualTo("a");
    assertThat(map.get(ns(0, 11))).isNull();
    assertThat(map.get(nsTrigger(0, 10, 0))).as("another kind of namespace of the same window").isNull();
    assertThat(map.get(StateNamespaces.global())).isNull();
    assertThat(map.size()).isEqualTo(1);
  }

  @Test
  void keepsWindowAndTriggerNamespacesApartByTriggerIndex() {
    NamespaceMap<String> map = new NamespaceMap<>(CODER);
    map.put(nsTrigger(0, 10, 0), "t0");
    map.put(nsTrigger(0, 10, 37), "t37"); // grows the per-window array
    map.put(ns(0, 10), "w");

    assertThat(map.get(nsTrigger(0, 10, 0))).isEqualTo("t0");
    assertThat(map.get(nsTrigger(0, 10, 37))).isEqualTo("t37");
    assertThat(map.get(nsTrigger(0, 10, 5))).isNull();
    assertThat(map.get(nsTrigger(0, 10, 100))).isNull();
    assertThat(map.get(ns(0, 10))).isEqualTo("w");
    assertThat(map.size()).isEqualTo(3);

    map.put(nsTrigger(0, 10, 37), "t37'");
    assertThat(map.size()).as("a replaced value is not counted twice").isEqualTo(3);
    map.remove(nsTrigger(0, 10, 37));
    assertThat(map.get(nsTrigger(0, 10, 37))).isNull();
    assertThat(map.get(nsTrigger(0, 10, 0))).isEqualTo("t0");
    assertThat(map.size()).isEqualTo(2);
  }

  @Test
  void holdsTheGlobalNamespaceAndOtherNamespacesByThemselves() {
    NamespaceMap<String> map = new NamespaceMap<>(CODER);
    StateNamespace custom = new Custom("x");
    map.put(StateNamespaces.global(), "g");
    map.put(custom, "c");

    assertThat(map.get(StateNamespaces.global())).isEqualTo("g");
    assertThat(map.get(new Custom("x"))).isEqualTo("c");
    assertThat(map.get(new Custom("y"))).isNull();
    assertThat(map.size()).isEqualTo(2);

    map.remove(StateNamespaces.global());
    map.remove(new Custom("x"));
    map.remove(ns(1, 2)); // absent: nothing changes
    assertThat(map.size()).isZero();
    assertThat(map.get(StateNamespaces.global())).isNull();
  }

  @Test
  void withoutACoderKeysWindowNamespacesByThemselves() {
    NamespaceMap<String> map = new NamespaceMap<>(null);
    map.put(ns(0, 10), "a");
    map.put(StateNamespaces.window(GlobalWindow.Coder.INSTANCE, GlobalWindow.INSTANCE), "global window");

    assertThat(map.get(ns(0, 10))).isEqualTo("a");
    assertThat(map.get(StateNamespaces.window(GlobalWindow.Coder.INSTANCE, GlobalWindow.INSTANCE)))
        .isEqualTo("global window");
    assertThat(map.size()).isEqualTo(2);
  }

  @Test
  void clearForgetsEverything() {
    NamespaceMap<String> map = new NamespaceMap<>(CODER);
    map.put(ns(0, 10), "a");
    map.put(nsTrigger(0, 10, 1), "b");
    map.put(StateNamespaces.global(), "c");
    map.clear();

    assertThat(map.size()).isZero();
    assertThat(map.get(ns(0, 10))).isNull();
    assertThat(map.get(nsTrigger(0, 10, 1))).isNull();
    assertThat(map.get(StateNamespaces.global())).isNull();
  }

  /**
   * Random puts, gets and removes over many windows (growing, probing and deleting in the window
   * table) agree with a HashMap keyed by runners-core's own namespace equality.
   */
  @Test
  void agreesWithAMapKeyedByNamespaceEqualityOverRandomOperations() {
    NamespaceMap<Integer> map = new NamespaceMap<>(CODER);
    java.util.Map<StateNamespace, Integer> reference = new java.util.HashMap<>();
    java.util.Random random = new java.util.Random(42);
    for (int op = 0; op < 20_000; op++) {
      long start = random.nextInt(300) * 10L;
      long end = start + 1 + random.nextInt(3); // windows that share a start collide often
      StateNamespace namespace = random.nextInt(4) == 0 ? nsTrigger(start, end, random.nextInt(3)) : ns(start, end);
      switch (random.nextInt(3)) {
        case 0 -> {
          map.put(namespace, op);
          reference.put(namespace, op);
        }
        case 1 -> {
          map.remove(namespace);
          reference.remove(namespace);
        }
        default -> assertThat(map.get(namespace)).as("op %s: %s", op, namespace).isEqualTo(reference.get(namespace));
      }
      assertThat(map.size()).isEqualTo(reference.size());
    }
    for (java.util.Map.Entry<StateNamespace, Integer> e : reference.entrySet()) {
      assertThat(map.get(e.getKey())).isEqualTo(e.getValue());
    }
  }

  /** A namespace of none of runners-core's kinds. */
  private record Custom(String name) implements StateNamespace {
    @Override
    public String stringKey() {
      return "/" + name + "/";
    }

    @Override
    public void appendTo(Appendable sb) throws IOException {
      sb.append(stringKey());
    }

    @Override
    public Object getCacheKey() {
      return name;
    }
  }
}
