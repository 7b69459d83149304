package dev.weir.state.cache;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.VarLongCoder;

/** A Long coder that counts its encodes and decodes, and can be told to fail. */
final class CountingCoder extends AtomicCoder<Long> {
  private static final long serialVersionUID = 1L;

  final AtomicInteger encodes = new AtomicInteger();
  final AtomicInteger decodes = new AtomicInteger();
  volatile boolean failEncode;

  @Override
  public void encode(Long value, OutputStream out) throws IOException {
    if (failEncode) {
      throw new CoderException("encode refused for " + value);
    }
    encodes.incrementAndGet();
    VarLongCoder.of().encode(value, out);
  }

  @Override
  public Long decode(InputStream in) throws IOException {
    decodes.incrementAndGet();
    return VarLongCoder.of().decode(in);
  }
}
