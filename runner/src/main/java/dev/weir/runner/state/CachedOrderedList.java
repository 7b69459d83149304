package dev.weir.runner.state;

import dev.weir.runner.state.StreamedRead.Scan;
import dev.weir.runner.state.StreamedRead.SkipCoder;
import dev.weir.state.cache.StateKey;
import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.StoreIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.OrderedListState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.samza.storage.kv.Entry;
import org.joda.time.Instant;

/**
 * Beam's {@link OrderedListState}, with the streamed take-out of
 * {@link CachedStateInternals.DrainableOrderedList}: one cell per element, in timestamp order.
 *
 * <ul>
 *   <li><b>Stores</b> timestamped elements, nulls included, ordered by timestamp and, among equal
 *       timestamps, by insertion.
 *   <li><b>Cells</b>: element cells under {@link CellLayout#orderedListCell}: the elements prefix,
 *       the timestamp as sortable ms (so unsigned byte order is time order, negative timestamps
 *       first), then a sequence number from the counter in the state's single cell; the value in
 *       the element coder, null as the coder's null.
 *   <li><b>Writes</b>: {@code add} is two cell writes (counter and element); {@code clearRange}
 *       deletes a range page by page; {@code clear} deletes the prefix and resets the counter.
 *   <li><b>Reads</b>: {@code read} and {@code readRange} are streamed range scans
 *       ({@link StreamedRead}), the timestamp decoded from each cell key; materialised if the range
 *       fits in one page.
 *   <li><b>Held reads</b> are snapshots: a write into a range a streamed read covers copies the
 *       read first.
 * </ul>
 *
 * <p>Threading: confined to the owning task's container thread.
 */
final class CachedOrderedList<T> extends ElementCells implements CachedStateInternals.DrainableOrderedList<T> {
  private final Coder<T> coder;
  private final NullElementCoder<T> nullCoder;

  /**
   * @param sequenceCell the state's single cell, which counts insertions
   * @param nullCoder writes a null element ({@link StateCoders#nullElement} of {@code coder})
   */
  CachedOrderedList(StreamedRead reads, StateKey sequenceCell, byte[] elements, Coder<T> coder,
      NullElementCoder<T> nullCoder) {
    super(reads, elements, sequenceCell);
    this.coder = coder;
    this.nullCoder = nullCoder;
  }

  /** The first cell key at or after {@code ts}. */
  private byte[] at(Instant ts) {
    return CellLayout.orderedListBound(elements, ts.getMillis());
  }

  private TimestampedValue<T> element(byte[] cell, Object value) {
    long millis = CellLayout.orderedListTimestampMs(cell, elements.length);
    return TimestampedValue.of(unmask(value), new Instant(millis));
  }

  @Override
  public void add(TimestampedValue<T> value) {
    byte[] cell = CellLayout.orderedListCell(elements, value.getTimestamp().getMillis(), nextSequence());
    reads.beforeWrite(cell);
    putNullable(store, store.key(cell), value.getValue(), coder, nullCoder);
  }

  @Override
  public Iterable<TimestampedValue<T>> read() {
    return reads.snapshot(new Elements(elements, elementsEnd));
  }

  @Override
  public Iterable<TimestampedValue<T>> readRange(Instant minTimestamp, Instant limitTimestamp) {
    if (!minTimestamp.isBefore(limitTimestamp)) {
      return List.of();
    }
    return reads.snapshot(new Elements(at(minTimestamp), at(limitTimestamp)));
  }

  @Override
  public void clearRange(Instant minTimestamp, Instant limitTimestamp) {
    if (!minTimestamp.isBefore(limitTimestamp)) {
      return;
    }
    byte[] from = at(minTimestamp);
    byte[] to = at(limitTimestamp);
    reads.beforeWrite(from, to);
    reads.deleteRange(from, to);
  }

  @Override
  public Instant drainBefore(Instant limit, Consumer<TimestampedValue<T>> consumer) {
    byte[] to = at(limit);
    reads.beforeWrite(elements, to);
    List<Entry<byte[], T>> page = new ArrayList<>();
    byte[] cursor = elements;
    while (true) {
      page.clear();
      try (StoreIterator<byte[], T> it = store.range(cursor, to, coder)) {
        while (page.size() < StreamedRead.PAGE_CELLS && it.hasNext()) {
          page.add(it.next());
        }
      }
      for (Entry<byte[], T> cell : page) {
        consumer.accept(element(cell.getKey(), cell.getValue()));
        store.delete(store.key(cell.getKey()));
      }
      if (page.size() < StreamedRead.PAGE_CELLS) {
        break;
      }
      cursor = ByteKeys.successor(page.get(page.size() - 1).getKey());
    }
    try (StoreIterator<byte[], Object> it = store.range(to, elementsEnd, SkipCoder.INSTANCE)) {
      if (it.hasNext()) {
        return new Instant(CellLayout.orderedListTimestampMs(it.next().getKey(), elements.length));
      }
    }
    store.delete(sequenceCell); // empty: restart the tie-break sequence (one cell less per idle key)
    return null;
  }

  @Override
  public OrderedListState<T> readRangeLater(Instant minTimestamp, Instant limitTimestamp) {
    return this;
  }

  @Override
  public OrderedListState<T> readLater() {
    return this;
  }

  /** Decodes cells into timestamped values: the timestamp from the cell key, the value as stored. */
  private final class Elements extends Scan<T, TimestampedValue<T>> {
    Elements(byte[] from, byte[] to) {
      super(store, from, to, coder);
    }

    @Override
    void decode(List<Entry<byte[], T>> cells, List<TimestampedValue<T>> out) {
      for (Entry<byte[], T> cell : cells) {
        out.add(element(cell.getKey(), cell.getValue()));
      }
    }
  }
}
