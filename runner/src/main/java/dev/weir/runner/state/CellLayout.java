package dev.weir.runner.state;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.beam.sdk.annotations.Internal;

/**
 * Every byte format Weir writes for Beam state and timers: the store keys of state cells, the
 * keys of the event-time timer index and of its slots, and the values the timer index writes
 * itself. This is the one place that knows them, and the format checkpoints will persist: change
 * a byte here and {@code CellLayoutTest}'s golden bytes fail; change the format on purpose and
 * bump {@link #FORMAT_VERSION}.
 *
 * <h2>Conventions</h2>
 *
 * Store order is unsigned lexicographic ({@link ByteKeys#ORDER}, RocksDB's bytewise order).
 * Integers are big-endian. A {@code len(x) | x} pair is a 4-byte length then the bytes, so that no
 * variable-length field can make one key a prefix of a key for another cell. A timestamp that must
 * sort is its epoch milliseconds with the sign bit flipped ({@code ms ^ Long.MIN_VALUE}), so that
 * unsigned byte order is time order, negative timestamps (before 1970, and Beam's minimum) first.
 * Every key starts with the format version byte, so a later format can live next to this one.
 *
 * <h2>Versions</h2>
 *
 * Version 1 kept a bag's elements one per cell (index {@code i} of the element); version 2 keeps
 * them in chunks ({@link CachedBag}); version 3 started every state cell and timer slot key
 * with the key's {@linkplain KeyGroups key group} and named operators by a stable
 * {@linkplain #operatorId id of their PTransform} instead of the order they opened in, so that
 * state can be found by transform when a job is restored at another parallelism or after its
 * pipeline changed; version 4 derived that id from the PTransform's
 * {@linkplain #stateIdentity state identity}, its full name without the DoFn class name Beam's
 * {@code ParDo} puts in it, so that a DoFn class may be renamed between versions of a pipeline;
 * version 5 (below) drops the key group from the front of the keys again (see "Why no key group").
 * {@link ContainerState} writes the version into every
 * commit's metadata and refuses to open state committed under another one, naming its directory,
 * and a checkpoint's plan fingerprint carries it too, so old state is never read as new.
 *
 * <h2>Operator ids</h2>
 *
 * An operator's keys are told apart from other operators' by a 4-byte id derived from its
 * PTransform's unique full name and the key space ({@link #operatorId}: state cells, timer index,
 * timer slots), the same on every run, in every container and at every parallelism. Two instances
 * of one PTransform in one container (two tasks of its stage) share the id: their keys belong to
 * disjoint key groups. {@link ContainerState#operatorId} refuses two names with one id.
 *
 * <h2>Why no key group in the keys</h2>
 *
 * Flink starts every RocksDB key with its key group, so that a restore reads one contiguous range
 * per key group. Weir's restore at another parallelism reads every entry of a checkpoint anyway
 * ({@link dev.weir.runner.checkpoint.RescaledRestore}) and finds an entry's key group by hashing
 * the key bytes it holds ({@link #keyBytesOfCell}), so a key-group prefix buys nothing there, and it
 * costs the running job: it scatters keys that arrive close in time and sort close together
 * (Nexmark's auction ids, any increasing id) over the whole key space, so that RocksDB's memtable
 * search and every cache line it touches lose their locality. With it first, a profile of Nexmark
 * Q5 (a count per auction and sliding window, the object cache evicting to the store) had 298
 * samples in the memtable's skip-list search; without it, 212 (one profiled run each,
 * {@code runner/benchmarks/runs/issue44/README.md}). Keys are ordered by operator, then key.
 *
 * <h2>State cells</h2>
 *
 * In the container's object-cached store ({@link ContainerState#STORE}). With {@code k}, {@code n}
 * and {@code i} the lengths of the key, namespace and state id:
 *
 * <pre>
 * offset        width  meaning          encoding
 * 0             1      format version   {@value #FORMAT_VERSION}
 * 1             4      operator         the PTransform's state id ({@link #operatorId}, space "state")
 * 5             4      k                int
 * 9             k      key              the key coder's bytes, as the shuffle encoded them
 * 9+k           4      n                int
 * 13+k          n      namespace        UTF-8 of StateNamespace#stringKey()
 * 13+k+n        4      i                int
 * 17+k+n        i      state id         UTF-8 of the StateTag's id
 * 17+k+n+i      1      kind             0 = the state's single cell, 1 = one of its element cells,
 *                                       2 = a watermark hold's cell
 * 18+k+n+i      ...    element suffix   by state kind, below (kind 1 only)
 * </pre>
 *
 * Bytes 0 to {@code 8+k} are the {@linkplain #keyPrefix key prefix}, built once per key; up to
 * {@code 16+k+n+i} the {@linkplain #base base}, built once per (key, namespace, state id); the
 * base followed by kind 1 is the state's {@linkplain #elements elements prefix}, under which a
 * prefix scan finds all its elements. The single cell (kind 0) of value and combining state holds
 * the value or accumulator (state's coder); a watermark hold's cell (kind 2, so that a restore can
 * find every hold without knowing the states: {@link #holdOfCell}) its hold
 * ({@code InstantCoder});
 * of a bag, its length, and of an ordered list or multimap, its next sequence number
 * ({@code VarLongCoder}). Element suffixes:
 *
 * <pre>
 * state kind      suffix                          cell value
 * bag             chunk index(8), long from 0      up to CachedBag.CHUNK_ELEMENTS elements (ListCoder of
 *                                                 the element coder: int count, then the elements)
 * map             map key (key coder)              map value (value coder)
 * set             element (element coder)          BooleanCoder true
 * ordered list    ts(8) sortable ms | seq(8)       element (element coder; null as the coder's null)
 * multimap        len(mk)(4) | mk | seq(8)         value (value coder; null as the coder's null)
 * </pre>
 *
 * Map keys and set elements are encoded whole ({@code CoderUtils.encodeToByteArray}, outer context),
 * so one may be a prefix of another ({@code "a"}, {@code "ab"}): a paged scan resumes at the
 * {@linkplain ByteKeys#successor successor} of its last cell, never at its prefix end. Ordered-list
 * and multimap sequence numbers break ties in insertion order.
 *
 * <h2>Timers</h2>
 *
 * The event-time timer index ({@link dev.weir.runner.timers.TimerIndex}) of one operator
 * instance keeps two kinds of keys: index keys, in the raw timer store
 * ({@link ContainerState#TIMER_STORE}), ordered by firing time within the task (one range scan
 * finds a task's earliest timers, whatever their key groups), and slot keys, in the object-cached
 * state store, which find a timer by identity and are laid out like state cells.
 * With {@code f} the length of the timer family id:
 *
 * <pre>
 * index key      offset   width  meaning
 *                0        1      format version {@value #FORMAT_VERSION}
 *                1        4      operator: the PTransform's id, space "timer-index"
 *                5        4      the task's partition (int)
 *                9        8      firing timestamp, sortable ms
 *                17       4+k    len(key) | key
 *                21+k     4+n    len(namespace) | namespace (UTF-8 of stringKey())
 *                25+k+n   4+i    len(timer id) | timer id (UTF-8)
 *                29+k+n+i 4+f    len(family) | family (UTF-8)
 * index value    0        8      output timestamp, ms (long)
 *
 * slot key       0        1      format version {@value #FORMAT_VERSION}
 *                1        4      operator: the PTransform's id, space "timer-slot"
 *                5        ...    as the index key from offset 17 (key, namespace, id, family)
 * slot value     0        8      firing timestamp, ms (long)
 *                8        8      output timestamp, ms (long)
 * </pre>
 *
 * A restore at another parallelism re-addresses index keys: the key group of the key in the index
 * key names the new partition. It finds the key group of a state cell or slot the same way, from
 * its key bytes.
 *
 * <h2>Cost</h2>
 *
 * Every builder allocates exactly the array it returns (no {@code ByteBuffer}, no intermediate
 * copies); callers keep what repeats (key prefix, bases, namespace bytes) and so allocate per
 * access only the cell keys that are new. Decoders read in place.
 *
 * <p>Threading: stateless; safe from any thread. Errors: builders trust their arguments (they are
 * the runner's own); decoders of a key of another layout throw {@link IllegalStateException} or
 * {@link ArrayIndexOutOfBoundsException}.
 */
@Internal
public final class CellLayout {
  /** The first byte of every key this class builds. */
  public static final byte FORMAT_VERSION = 5;
  /** Kind byte of a state's single cell. */
  static final byte KIND_CELL = 0;
  /** Kind byte before the suffix of a state's element cells. */
  static final byte KIND_ELEMENT = 1;
  /** Kind byte of a watermark hold's single cell. */
  static final byte KIND_HOLD = 2;
  /** Width of an operator id ({@link #operatorId}). */
  static final int OPERATOR_ID_BYTES = 4;
  /** Offset of the operator id in a state cell or timer slot key. */
  static final int CELL_OPERATOR_OFFSET = 1;

  private static final int INT = 4;
  private static final int LONG = 8;

  private CellLayout() {}

  // ---- operator ids ------------------------------------------------------------------------

  /**
   * The 4-byte id of {@code transform}'s keys in one key space: a 32-bit FNV-1a hash of the UTF-8
   * of {@code space + '/' + stateIdentity(transform)}, mixed by murmur3's finalizer, big-endian. Stable across
   * runs, JVMs and parallelism; collisions are possible in principle and refused by
   * {@link ContainerState#operatorId}.
   *
   * @param transform the PTransform's unique full name
   * @param space the key space: {@code "state"}, {@code "timer-index"} or {@code "timer-slot"}
   */
  static byte[] operatorId(String transform, String space) {
    int h = 0x811c9dc5;
    for (byte b : (space + '/' + stateIdentity(transform)).getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xFF)) * 0x01000193;
    }
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    byte[] id = new byte[OPERATOR_ID_BYTES];
    putInt(id, 0, h);
    return id;
  }

  /** Beam's name of the one primitive {@code ParDo.of(fn)} expands to, under the name the user gave. */
  private static final java.util.regex.Pattern PAR_DO_PRIMITIVE = java.util.regex.Pattern.compile("(.+)/ParMultiDo\\([^/]*\\)");

  /**
   * What identifies PTransform {@code fullName}'s state across versions of a pipeline: its full name,
   * except that a {@code ParDo}'s primitive, which Beam names {@code <user's name>/ParMultiDo(<DoFn
   * class>)}, is known by the user's name alone. So a DoFn class renamed under the same
   * {@code apply("name", ParDo.of(...))} keeps its state, as in Flink, where state follows an
   * operator's uid and not its class. A {@code ParDo} applied without a name has the class in its
   * user's name too ({@code ParDo(Fn)}), and cannot be renamed. Unique among a plan's nodes: the
   * composite a primitive is named under is not a node itself.
   */
  public static String stateIdentity(String fullName) {
    java.util.regex.Matcher m = PAR_DO_PRIMITIVE.matcher(fullName);
    return m.matches() ? m.group(1) : fullName;
  }

  // ---- state cells -------------------------------------------------------------------------

  /**
   * {@code version | operator(4) | len(key) | key}: the part of every cell key of one key of one
   * operator.
   *
   * @param operatorId 4 bytes from {@link #operatorId} (space "state")
   * @param keyBytes the key encoded with the key coder
   */
  static byte[] keyPrefix(byte[] operatorId, byte[] keyBytes) {
    byte[] k = new byte[CELL_OPERATOR_OFFSET + operatorId.length + INT + keyBytes.length];
    putHeader(k, operatorId);
    putBytes(k, CELL_OPERATOR_OFFSET + operatorId.length, keyBytes);
    return k;
  }

  /**
   * The encoded key of a state cell or timer slot key (a copy), by which a restore finds its key
   * group ({@link KeyGroups#keyGroupOf}).
   *
   * @throws ArrayIndexOutOfBoundsException if {@code cell} is not such a key
   */
  public static byte[] keyBytesOfCell(byte[] cell) {
    return fieldBytes(cell, CELL_OPERATOR_OFFSET + OPERATOR_ID_BYTES);
  }

  /** The operator id (as an int) of a state cell or timer slot key. */
  public static int operatorOfCell(byte[] cell) {
    return getInt(cell, CELL_OPERATOR_OFFSET);
  }

  /** The operator id (as an int) of a timer index key. */
  public static int operatorOfTimerIndexKey(byte[] key) {
    return getInt(key, 1);
  }

  /**
   * {@link #operatorId} of {@code transform}'s key space {@code space} as an int, recorded in
   * {@code names} (id to {@code "<space> of '<transform>'"}) so that two key spaces with one id are
   * refused.
   *
   * @throws IllegalStateException naming both if {@code names} holds another key space with the same
   *     id (a 32-bit hash collision; renaming either PTransform resolves it)
   */
  public static int claimOperatorId(java.util.Map<Integer, String> names, String transform, String space) {
    int id = operatorIdValue(transform, space);
    String name = space + " of '" + transform + "'";
    String known = names.putIfAbsent(id, name);
    if (known != null && !known.equals(name)) {
      throw new IllegalStateException("The " + known + " and the " + name + " hash to the same state id "
          + Integer.toHexString(id) + "; rename one of the two PTransforms");
    }
    return id;
  }

  /** {@link #operatorId} as an int, as {@link #operatorOfCell} and {@link #operatorOfTimerIndexKey} return it. */
  public static int operatorIdValue(String transform, String space) {
    return getInt(operatorId(transform, space), 0);
  }

  /** The key spaces of {@link #operatorId}: state cells, a timer index's keys, its slots. */
  public static final java.util.List<String> OPERATOR_SPACES = java.util.List.of("state", "timer-index", "timer-slot");

  /**
   * A decoded state cell key ({@link #keyPrefix}, {@link #base}): its operator id, encoded key,
   * namespace and state id.
   */
  public record CellKey(int operator, byte[] keyBytes, String namespace, String stateId) {}

  /**
   * Decodes the fields of a state cell key up to its state id.
   *
   * @throws IllegalStateException if it is not a key of this format version
   * @throws ArrayIndexOutOfBoundsException if it is not a state cell key
   */
  public static CellKey decodeCell(byte[] cell) {
    if (cell[0] != FORMAT_VERSION) {
      throw new IllegalStateException("state cell of unknown format version " + cell[0]);
    }
    int at = CELL_OPERATOR_OFFSET + OPERATOR_ID_BYTES;
    byte[] keyBytes = fieldBytes(cell, at);
    at = afterField(cell, at);
    String namespace = fieldUtf8(cell, at);
    String stateId = fieldUtf8(cell, afterField(cell, at));
    return new CellKey(operatorOfCell(cell), keyBytes, namespace, stateId);
  }

  /** The format version byte of any key this class builds. */
  public static int formatOf(byte[] key) {
    return key[0];
  }

  /** {@code version | operator}, at the start of {@code k}. */
  private static void putHeader(byte[] k, byte[] operatorId) {
    k[0] = FORMAT_VERSION;
    System.arraycopy(operatorId, 0, k, CELL_OPERATOR_OFFSET, operatorId.length);
  }

  /**
   * {@code keyPrefix | len(ns) | ns | len(id) | id}: everything of a state's cell keys before the
   * kind byte.
   *
   * @param namespace UTF-8 of the namespace's {@code stringKey()}
   * @param stateId UTF-8 of the state tag's id
   */
  static byte[] base(byte[] keyPrefix, byte[] namespace, byte[] stateId) {
    byte[] k = Arrays.copyOf(keyPrefix, keyPrefix.length + INT + namespace.length + INT + stateId.length);
    int at = putBytes(k, keyPrefix.length, namespace);
    putBytes(k, at, stateId);
    return k;
  }

  /** {@code base | 0}: the state's single cell. */
  static byte[] cell(byte[] base) {
    byte[] k = Arrays.copyOf(base, base.length + 1);
    k[base.length] = KIND_CELL;
    return k;
  }

  /** {@code base | 2}: a watermark hold's cell. */
  static byte[] holdCell(byte[] base) {
    byte[] k = Arrays.copyOf(base, base.length + 1);
    k[base.length] = KIND_HOLD;
    return k;
  }

  /**
   * The hold (epoch ms) a state cell stores if it is a watermark hold's cell ({@link #holdCell}),
   * or {@link Long#MIN_VALUE} if it is another cell.
   *
   * @param cell a state cell key of this format
   * @param value its stored value
   */
  public static long holdOfCell(byte[] cell, byte[] value) {
    int at = CELL_OPERATOR_OFFSET + OPERATOR_ID_BYTES;
    for (int field = 0; field < 3; field++) { // key, namespace, state id
      at = afterField(cell, at);
    }
    if (at != cell.length - 1 || cell[at] != KIND_HOLD) {
      return Long.MIN_VALUE;
    }
    return sortableMs(getLong(value, 0)); // InstantCoder: big-endian ms with the sign bit flipped
  }

  /** {@code base | 1}: the prefix of all the state's element cells. */
  static byte[] elements(byte[] base) {
    byte[] k = Arrays.copyOf(base, base.length + 1);
    k[base.length] = KIND_ELEMENT;
    return k;
  }

  /** {@code elements | index(8)}: the bag chunk at {@code index} (from 0; see {@link CachedBag}). */
  static byte[] bagChunk(byte[] elements, long index) {
    byte[] k = Arrays.copyOf(elements, elements.length + LONG);
    putLong(k, elements.length, index);
    return k;
  }

  /** {@code elements | encoded}: a map entry's cell (by its encoded key) or a set element's. */
  static byte[] entry(byte[] elements, byte[] encoded) {
    byte[] k = Arrays.copyOf(elements, elements.length + encoded.length);
    System.arraycopy(encoded, 0, k, elements.length, encoded.length);
    return k;
  }

  /** The encoded map key or set element of an {@link #entry} cell (a copy). */
  static byte[] entryKey(byte[] cell, int elementsLength) {
    return Arrays.copyOfRange(cell, elementsLength, cell.length);
  }

  /**
   * {@code elements | ts(8)}: the smallest ordered-list cell key at or after {@code timestampMs},
   * a bound of range reads and deletes.
   */
  static byte[] orderedListBound(byte[] elements, long timestampMs) {
    byte[] k = Arrays.copyOf(elements, elements.length + LONG);
    putLong(k, elements.length, sortableMs(timestampMs));
    return k;
  }

  /** {@code elements | ts(8) | seq(8)}: one ordered-list element's cell. */
  static byte[] orderedListCell(byte[] elements, long timestampMs, long sequence) {
    byte[] k = Arrays.copyOf(elements, elements.length + 2 * LONG);
    putLong(k, elements.length, sortableMs(timestampMs));
    putLong(k, elements.length + LONG, sequence);
    return k;
  }

  /** The timestamp (ms) of an {@link #orderedListCell} or {@link #orderedListBound} key. */
  static long orderedListTimestampMs(byte[] cell, int elementsLength) {
    return sortableMs(getLong(cell, elementsLength));
  }

  /** {@code elements | len(mk) | mk}: the prefix of all cells of one multimap key. */
  static byte[] multimapKeyPrefix(byte[] elements, byte[] encodedKey) {
    byte[] k = Arrays.copyOf(elements, elements.length + INT + encodedKey.length);
    putBytes(k, elements.length, encodedKey);
    return k;
  }

  /** {@code elements | len(mk) | mk | seq(8)}: one (key, value) pair's cell. */
  static byte[] multimapCell(byte[] elements, byte[] encodedKey, long sequence) {
    byte[] k = Arrays.copyOf(elements, elements.length + INT + encodedKey.length + LONG);
    putLong(k, putBytes(k, elements.length, encodedKey), sequence);
    return k;
  }

  /** End (exclusive offset) of {@code len(mk) | mk} within a multimap cell key. */
  static int multimapKeyEnd(byte[] cell, int elementsLength) {
    return elementsLength + INT + getInt(cell, elementsLength);
  }

  /** The encoded multimap key of a cell whose key ends at {@code keyEnd} (a copy). */
  static byte[] multimapKey(byte[] cell, int elementsLength, int keyEnd) {
    return Arrays.copyOfRange(cell, elementsLength + INT, keyEnd);
  }

  // ---- timers ------------------------------------------------------------------------------

  /**
   * {@code version | operator(4) | partition(4)}: the prefix of one task's timer index keys.
   *
   * @param operatorId from {@link #operatorId} (space "timer-index")
   * @param partition the task's partition of its stage
   */
  public static byte[] timerIndexPrefix(byte[] operatorId, int partition) {
    byte[] k = new byte[1 + operatorId.length + INT];
    k[0] = FORMAT_VERSION;
    System.arraycopy(operatorId, 0, k, 1, operatorId.length);
    putInt(k, 1 + operatorId.length, partition);
    return k;
  }

  /** Length of a {@link #timerIndexPrefix}. */
  public static final int TIMER_INDEX_PREFIX_BYTES = 1 + OPERATOR_ID_BYTES + INT;

  /** The task partition of a timer index key (see {@link #timerIndexPrefix}). */
  public static int partitionOfTimerIndexKey(byte[] key) {
    return getInt(key, 1 + OPERATOR_ID_BYTES);
  }

  /** A copy of timer index key {@code key} re-addressed to {@code partition} (for a rescaled restore). */
  public static byte[] withTimerIndexPartition(byte[] key, int partition) {
    byte[] k = key.clone();
    putInt(k, 1 + OPERATOR_ID_BYTES, partition);
    return k;
  }

  /**
   * {@code indexPrefix | ts(8) | len(key) | key | len(ns) | ns | len(id) | id | len(family) |
   * family}: a timer's key in the index, ordered by firing time, then key, namespace, id, family.
   *
   * @param indexPrefix from {@link #timerIndexPrefix}
   * @param namespace UTF-8 of the namespace's {@code stringKey()}; {@code timerId} and
   *     {@code familyId} are UTF-8 too
   */
  public static byte[] timerIndexKey(byte[] indexPrefix, long timestampMs, byte[] keyBytes, byte[] namespace,
      byte[] timerId, byte[] familyId) {
    byte[] k = Arrays.copyOf(indexPrefix,
        indexPrefix.length + LONG + 4 * INT + keyBytes.length + namespace.length + timerId.length + familyId.length);
    putLong(k, indexPrefix.length, sortableMs(timestampMs));
    putTimerIdentity(k, indexPrefix.length + LONG, keyBytes, namespace, timerId, familyId);
    return k;
  }

  /**
   * {@code version | operator(4) | len(key) | key | len(ns) | ns | len(id) | id | len(family) |
   * family}: a timer's slot key, independent of its firing time.
   *
   * @param slotOperatorId from {@link #operatorId} (space "timer-slot")
   */
  public static byte[] timerSlotKey(byte[] slotOperatorId, byte[] keyBytes, byte[] namespace,
      byte[] timerId, byte[] familyId) {
    int header = CELL_OPERATOR_OFFSET + slotOperatorId.length;
    byte[] k = new byte[header + 4 * INT + keyBytes.length + namespace.length + timerId.length + familyId.length];
    putHeader(k, slotOperatorId);
    putTimerIdentity(k, header, keyBytes, namespace, timerId, familyId);
    return k;
  }

  private static void putTimerIdentity(byte[] k, int at, byte[] keyBytes, byte[] namespace, byte[] timerId,
      byte[] familyId) {
    at = putBytes(k, at, keyBytes);
    at = putBytes(k, at, namespace);
    at = putBytes(k, at, timerId);
    putBytes(k, at, familyId);
  }

  /** A decoded {@link #timerIndexKey}: firing time (ms), encoded key, and the UTF-8 fields as strings. */
  public record TimerKey(long timestampMs, byte[] keyBytes, String namespace, String timerId, String familyId) {}

  /**
   * Decodes a {@link #timerIndexKey}.
   *
   * @param prefixLength length of the index prefix it was built with
   * @throws IllegalStateException if the key is not of this format version
   */
  public static TimerKey decodeTimerIndexKey(byte[] key, int prefixLength) {
    if (key[0] != FORMAT_VERSION) {
      throw new IllegalStateException("timer index key of unknown format version " + key[0]);
    }
    int at = prefixLength;
    long ts = sortableMs(getLong(key, at));
    at += LONG;
    byte[] keyBytes = fieldBytes(key, at);
    at = afterField(key, at);
    String namespace = fieldUtf8(key, at);
    at = afterField(key, at);
    String timerId = fieldUtf8(key, at);
    String familyId = fieldUtf8(key, afterField(key, at));
    return new TimerKey(ts, keyBytes, namespace, timerId, familyId);
  }

  /** A timer index value: the output timestamp (ms), 8 bytes. */
  public static byte[] timerIndexValue(long outputTimestampMs) {
    byte[] v = new byte[LONG];
    putLong(v, 0, outputTimestampMs);
    return v;
  }

  /** The output timestamp (ms) of a {@link #timerIndexValue}. */
  public static long timerIndexOutputMs(byte[] value) {
    return getLong(value, 0);
  }

  /** Width of a timer slot value. */
  public static final int TIMER_SLOT_BYTES = 2 * LONG;

  /** A timer slot value: firing timestamp then output timestamp (ms), 16 bytes. */
  public static byte[] timerSlotValue(long timestampMs, long outputTimestampMs) {
    byte[] v = new byte[TIMER_SLOT_BYTES];
    putLong(v, 0, timestampMs);
    putLong(v, LONG, outputTimestampMs);
    return v;
  }

  /** Decodes a {@link #timerSlotValue} into {@code {timestampMs, outputTimestampMs}}. */
  public static long[] decodeTimerSlot(byte[] value) {
    return new long[] {getLong(value, 0), getLong(value, LONG)};
  }

  // ---- primitives --------------------------------------------------------------------------

  /** Epoch ms with the sign bit flipped, so unsigned byte order is time order; its own inverse. */
  static long sortableMs(long ms) {
    return ms ^ Long.MIN_VALUE;
  }

  /** The offset after the {@code len(x) | x} field at {@code at}. */
  private static int afterField(byte[] k, int at) {
    return at + INT + getInt(k, at);
  }

  /** The bytes {@code x} of the {@code len(x) | x} field at {@code at} (a copy). */
  private static byte[] fieldBytes(byte[] k, int at) {
    return Arrays.copyOfRange(k, at + INT, afterField(k, at));
  }

  /** The UTF-8 string {@code x} of the {@code len(x) | x} field at {@code at}. */
  private static String fieldUtf8(byte[] k, int at) {
    return new String(k, at + INT, getInt(k, at), StandardCharsets.UTF_8);
  }

  /** Writes {@code len(bytes) | bytes} at {@code at}; returns the offset after them. */
  private static int putBytes(byte[] target, int at, byte[] bytes) {
    putInt(target, at, bytes.length);
    System.arraycopy(bytes, 0, target, at + INT, bytes.length);
    return at + INT + bytes.length;
  }

  static void putInt(byte[] target, int at, int value) {
    target[at] = (byte) (value >>> 24);
    target[at + 1] = (byte) (value >>> 16);
    target[at + 2] = (byte) (value >>> 8);
    target[at + 3] = (byte) value;
  }

  static int getInt(byte[] source, int at) {
    return ((source[at] & 0xFF) << 24) | ((source[at + 1] & 0xFF) << 16) | ((source[at + 2] & 0xFF) << 8)
        | (source[at + 3] & 0xFF);
  }

  static void putLong(byte[] target, int at, long value) {
    for (int i = 0; i < LONG; i++) {
      target[at + i] = (byte) (value >>> (56 - 8 * i));
    }
  }

  static long getLong(byte[] source, int at) {
    long value = 0;
    for (int i = 0; i < LONG; i++) {
      value = (value << 8) | (source[at + i] & 0xFF);
    }
    return value;
  }
}
