package dev.weir.samza;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.StoreIterator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.samza.storage.kv.Entry;
import org.apache.samza.storage.kv.KeyValueIterator;
import org.apache.samza.storage.kv.KeyValueStore;

/**
 * Weir's {@link StateStorage} over one Samza-managed {@code KeyValueStore<byte[], byte[]>} of a
 * task (samza-kv-rocksdb's store with a Kafka changelog, {@link SamzaJobConfig#STATE_STORE}), so
 * that Weir's {@code ObjectCache}/{@code CachedStore} sit on it exactly as on
 * {@code RocksDbStorage}, and samza-core restores it from the changelog after a process dies.
 *
 * <p>Layout: every logical store is a key range of the one Samza store; a key {@code k} of logical
 * store {@code s} is {@code [len(s)][utf8(s)][k]} (one length byte, names up to 255 bytes), so a
 * logical store's keys sort together and in their own unsigned order (Samza's RocksDB store uses
 * RocksDB's bytewise comparator). Reserved logical stores (names starting {@code __weir}): the
 * commit record ({@link ByteKeys#encodeCommitRecord}: sequence and caller metadata), the names
 * of the logical stores and the task's message sequence numbers ({@link #sequenceStore()}). They
 * live in the same store, so the changelog restores them with the state.
 *
 * <p>Commit: writes go straight into the Samza store (and its changelog producer); there is no
 * staging here and {@link #commit} only writes the commit record. Durability is samza-core's: at a
 * Samza commit the store and its changelog are flushed before the task's input offsets are
 * checkpointed, and with samza-core's transactional state (its default) the checkpoint records the
 * changelog offset, so a restore trims what was written after it. See {@link SamzaStageTaskFactory}
 * for what that promises.
 *
 * <p>Threading: samza-core calls a task from one thread at a time; the storage is confined to it.
 * {@link #close} does not close the Samza store (samza-core owns it).
 */
final class SamzaKvStorage implements StateStorage {
  private static final String COMMIT_STORE = "__weir.commit";
  private static final String NAMES_STORE = "__weir.names";
  private static final String SEQUENCES_STORE = "__weir.sequences";
  private static final byte[] COMMIT_KEY = {0};
  private static final byte[] PRESENT = {1};

  private final KeyValueStore<byte[], byte[]> kv;
  private final Map<String, Store> stores = new HashMap<>();
  private final Set<String> names = new LinkedHashSet<>();
  private final Store commitStore;
  private final Store namesStore;
  private final Store sequencesStore;
  private ByteKeys.CommitRecord committed;
  private boolean closed;

  /**
   * Opens the storage over {@code kv}, reading the restored commit record and store names.
   *
   * @param kv the task's Samza store of raw bytes (byte serdes)
   */
  SamzaKvStorage(KeyValueStore<byte[], byte[]> kv) {
    this.kv = Objects.requireNonNull(kv, "kv");
    this.commitStore = new Store(COMMIT_STORE);
    this.namesStore = new Store(NAMES_STORE);
    this.sequencesStore = new Store(SEQUENCES_STORE);
    byte[] record = commitStore.get(COMMIT_KEY);
    this.committed = record == null ? ByteKeys.CommitRecord.NONE : ByteKeys.decodeCommitRecord(record);
    try (StoreIterator<byte[], byte[]> it = namesStore.all()) {
      while (it.hasNext()) {
        names.add(new String(it.next().getKey(), StandardCharsets.UTF_8));
      }
    }
  }

  @Override
  public SortedByteStore store(String name) {
    checkOpen();
    SortedByteStore.checkName(name);
    Store store = stores.get(name);
    if (store == null) {
      store = new Store(name);
      stores.put(name, store);
      if (names.add(name)) {
        namesStore.put(name.getBytes(StandardCharsets.UTF_8), PRESENT);
      }
    }
    return store;
  }

  /**
   * The reserved logical store of the task's message sequence numbers ({@link MessageSequences}):
   * in the same Samza store as the state, so samza-core checkpoints and restores them with it.
   */
  SortedByteStore sequenceStore() {
    checkOpen();
    return sequencesStore;
  }

  @Override
  public Set<String> storeNames() {
    return Set.copyOf(names);
  }

  /** Writes the commit record (sequence + 1, {@code metadata}) into the store; samza-core makes it durable. */
  @Override
  public void commit(Map<String, byte[]> metadata) {
    checkOpen();
    ByteKeys.CommitRecord next = new ByteKeys.CommitRecord(committed.sequence() + 1, Map.copyOf(metadata));
    commitStore.put(COMMIT_KEY, ByteKeys.encodeCommitRecord(next.sequence(), next.metadata()));
    committed = next;
  }

  @Override
  public Map<String, byte[]> committedMetadata() {
    return committed.metadata();
  }

  @Override
  public long commitSequence() {
    return committed.sequence();
  }

  /** Always 0: writes are not staged here but go to the Samza store at once. */
  @Override
  public long stagedBytes() {
    return 0;
  }

  /** Empty: samza-core owns the store's directory ({@code job.logged.store.base.dir}). */
  @Override
  public Optional<Path> directory() {
    return Optional.empty();
  }

  /** True: what a Samza commit flushed (store and changelog) survives the process. */
  @Override
  public boolean isDurable() {
    return true;
  }

  /** Marks the storage closed; the Samza store stays open (samza-core closes it). Idempotent. */
  @Override
  public void close() {
    closed = true;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the Samza state storage is closed");
    }
  }

  /** One logical store: a key prefix of the Samza store. */
  private final class Store implements SortedByteStore {
    private final String name;
    private final byte[] prefix;
    private final byte[] end;

    Store(String name) {
      this.name = name;
      byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
      if (utf8.length > 255) {
        throw new IllegalArgumentException("store name longer than 255 UTF-8 bytes: '" + name + "'");
      }
      this.prefix = new byte[utf8.length + 1];
      prefix[0] = (byte) utf8.length;
      System.arraycopy(utf8, 0, prefix, 1, utf8.length);
      // never null: the length byte and UTF-8 bytes are never all 0xFF
      this.end = ByteKeys.prefixEnd(prefix);
    }

    private byte[] wrap(byte[] key) {
      Objects.requireNonNull(key, "key");
      byte[] full = Arrays.copyOf(prefix, prefix.length + key.length);
      System.arraycopy(key, 0, full, prefix.length, key.length);
      return full;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public byte[] get(byte[] key) {
      checkOpen();
      return kv.get(wrap(key));
    }

    @Override
    public void put(byte[] key, byte[] value) {
      checkOpen();
      Objects.requireNonNull(value, "value");
      kv.put(wrap(key), value);
    }

    @Override
    public void putAll(List<Entry<byte[], byte[]>> entries) {
      checkOpen();
      Objects.requireNonNull(entries, "entries");
      List<Entry<byte[], byte[]>> wrapped = new java.util.ArrayList<>(entries.size());
      for (Entry<byte[], byte[]> e : entries) {
        Objects.requireNonNull(e, "entry");
        wrapped.add(new Entry<>(wrap(e.getKey()), Objects.requireNonNull(e.getValue(), "value")));
      }
      kv.putAll(wrapped);
    }

    @Override
    public void delete(byte[] key) {
      checkOpen();
      kv.delete(wrap(key));
    }

    @Override
    public StoreIterator<byte[], byte[]> prefix(byte[] keyPrefix) {
      checkOpen();
      byte[] from = wrap(keyPrefix);
      byte[] to = ByteKeys.prefixEnd(from);
      return iterate(from, to == null ? end : to);
    }

    @Override
    public StoreIterator<byte[], byte[]> range(byte[] from, byte[] to) {
      checkOpen();
      return iterate(wrap(from), to == null ? end : wrap(to));
    }

    @Override
    public StoreIterator<byte[], byte[]> all() {
      checkOpen();
      return iterate(prefix, end);
    }

    /** {@code [from, to)} of the Samza store, keys stripped of this store's prefix. */
    private StoreIterator<byte[], byte[]> iterate(byte[] from, byte[] to) {
      KeyValueIterator<byte[], byte[]> it = kv.range(from, to);
      return new StoreIterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public Entry<byte[], byte[]> next() {
          Entry<byte[], byte[]> e = it.next();
          byte[] key = e.getKey();
          return new Entry<>(Arrays.copyOfRange(key, prefix.length, key.length), e.getValue());
        }

        @Override
        public void remove() {
          throw new UnsupportedOperationException("remove");
        }

        @Override
        public void close() {
          it.close();
        }
      };
    }

    @Override
    public void flush() {
      commit(committed.metadata());
    }

    /** Samza checkpoints the underlying store itself; a logical store has nothing of its own. */
    @Override
    public Optional<Path> checkpoint(org.apache.samza.checkpoint.CheckpointId id) {
      return Optional.empty();
    }

    @Override
    public void close() {}
  }
}
