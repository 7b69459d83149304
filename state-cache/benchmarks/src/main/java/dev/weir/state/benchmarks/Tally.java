package dev.weir.state.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;

/**
 * A small state value of the shape a Beam user keeps in a {@code ValueState}: a running total, a
 * ~20-character label and an update counter (about 25 bytes encoded with {@link TallyCoder}).
 * Immutable, as values in the object cache must be: an update builds a new {@code Tally}.
 *
 * @param total a running total
 * @param label a label of about 20 characters, unchanged by updates
 * @param updates how many times the value was updated
 */
record Tally(long total, String label, int updates) implements Serializable {

  private static final long serialVersionUID = 1L;

  /** The value after one more update adding {@code amount}. */
  Tally plus(long amount) {
    return new Tally(total + amount, label, updates + 1);
  }

  /**
   * A hand-written Beam coder for {@link Tally}, composed of Beam's {@link VarLongCoder},
   * {@link StringUtf8Coder} and {@link VarIntCoder}: what a user writes instead of falling back to
   * Java serialization.
   */
  static final class TallyCoder extends CustomCoder<Tally> {
    private static final long serialVersionUID = 1L;
    private static final TallyCoder INSTANCE = new TallyCoder();
    private static final VarLongCoder TOTAL = VarLongCoder.of();
    private static final StringUtf8Coder LABEL = StringUtf8Coder.of();
    private static final VarIntCoder UPDATES = VarIntCoder.of();

    static TallyCoder of() {
      return INSTANCE;
    }

    private TallyCoder() {}

    @Override
    public void encode(Tally value, OutputStream out) throws IOException {
      if (value == null) {
        throw new CoderException("cannot encode a null Tally");
      }
      TOTAL.encode(value.total(), out);
      LABEL.encode(value.label(), out);
      UPDATES.encode(value.updates(), out);
    }

    @Override
    public Tally decode(InputStream in) throws IOException {
      return new Tally(TOTAL.decode(in), LABEL.decode(in), UPDATES.decode(in));
    }

    @Override
    public List<? extends Coder<?>> getCoderArguments() {
      return List.of();
    }

    @Override
    public void verifyDeterministic() throws NonDeterministicException {
      TOTAL.verifyDeterministic();
      LABEL.verifyDeterministic();
      UPDATES.verifyDeterministic();
    }
  }
}
