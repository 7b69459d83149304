package dev.weir.state.store;

import java.nio.charset.StandardCharsets;

/** UTF-8 shorthands for test keys and values. */
public final class TestBytes {
  private TestBytes() {}

  public static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  public static String s(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }
}
