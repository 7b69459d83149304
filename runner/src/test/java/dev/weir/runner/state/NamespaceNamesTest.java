package dev.weir.runner.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateNamespaces;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

class NamespaceNamesTest {
  private static final Coder<IntervalWindow> CODER = IntervalWindow.getCoder();

  private static StateNamespace ns(long startMs, long endMs) {
    return StateNamespaces.window(CODER, new IntervalWindow(new Instant(startMs), new Instant(endMs)));
  }

  @Test
  void aNameIsTheUtf8OfTheNamespacesStringKey() {
    NamespaceNames names = new NamespaceNames(CODER);
    for (StateNamespace namespace : new StateNamespace[] {
        StateNamespaces.global(), ns(0, 10),
        StateNamespaces.windowAndTrigger(CODER, new IntervalWindow(new Instant(0), new Instant(10)), 3)}) {
      assertThat(names.utf8(namespace)).isEqualTo(namespace.stringKey().getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void equalWindowNamespacesOfDifferentKeysShareOneEncoding() {
    NamespaceNames names = new NamespaceNames(CODER);
    byte[] first = names.utf8(ns(0, 10)); // runners-core builds a new namespace object per access

    assertThat(names.utf8(ns(0, 10))).isSameAs(first);
    assertThat(names.utf8(ns(0, 11))).isNotSameAs(first).isNotEqualTo(first);
  }

  @Test
  void manyWindowsAreForgottenInsteadOfKept() {
    NamespaceNames names = new NamespaceNames(CODER);
    byte[] first = names.utf8(ns(0, 10));
    for (int i = 1; i <= NamespaceNames.MAX_NAMESPACES; i++) {
      names.utf8(ns(i * 10L, i * 10L + 10));
    }

    byte[] again = names.utf8(ns(0, 10));
    assertThat(again).as("encoded again after the table was cleared").isNotSameAs(first).isEqualTo(first);
  }
}
