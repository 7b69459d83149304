package dev.weir.runner.translation;

import java.util.List;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.testing.TestStream;

/**
 * Where a source stage's data comes from: one partition per split. Immutable; built at
 * translation time (splitting happens on the submitting thread, before the job starts).
 */
public sealed interface SourceSpec {

  /** Number of partitions (tasks) of the stage. */
  int partitions();

  /** A short description for the plan log. */
  String describe();

  /** Beam's {@code Impulse}: one empty byte array in the global window, one partition. */
  record Impulse() implements SourceSpec {
    @Override
    public int partitions() {
      return 1;
    }

    @Override
    public String describe() {
      return "impulse";
    }
  }

  /** Nothing at all (an empty Flatten): the watermark goes straight to +infinity. */
  record Empty() implements SourceSpec {
    @Override
    public int partitions() {
      return 1;
    }

    @Override
    public String describe() {
      return "empty";
    }
  }

  /** A bounded source split into {@code splits.size()} partitions. */
  record Bounded(List<? extends BoundedSource<?>> splits) implements SourceSpec {
    @Override
    public int partitions() {
      return splits.size();
    }

    @Override
    public String describe() {
      return "bounded read, " + splitsOf(splits);
    }
  }

  /**
   * Beam's {@code TestStream}: its events in order, on one partition; the job then runs on a
   * manual processing-time clock that only the stream's processing-time events advance.
   */
  record Test(List<? extends TestStream.Event<?>> events) implements SourceSpec {
    @Override
    public int partitions() {
      return 1;
    }

    @Override
    public String describe() {
      return "test stream, " + events.size() + " event(s)";
    }
  }

  /** An unbounded source split into {@code splits.size()} partitions. */
  record Unbounded(List<? extends UnboundedSource<?, ?>> splits) implements SourceSpec {
    @Override
    public int partitions() {
      return splits.size();
    }

    @Override
    public String describe() {
      return "unbounded read, " + splitsOf(splits);
    }
  }

  /**
   * "N split(s)", or "N split group(s) of M split(s)" when the partitions read
   * {@link BoundedSplitGroup}s or {@link UnboundedSplitGroup}s.
   */
  private static String splitsOf(List<?> splits) {
    int grouped = 0;
    for (Object s : splits) {
      if (s instanceof BoundedSplitGroup<?> g) {
        grouped += g.splits().size();
      } else if (s instanceof UnboundedSplitGroup<?> g) {
        grouped += g.splits().size();
      } else {
        grouped++;
      }
    }
    return grouped == splits.size() ? splits.size() + " split(s)"
        : splits.size() + " split group(s) of " + grouped + " split(s)";
  }
}
