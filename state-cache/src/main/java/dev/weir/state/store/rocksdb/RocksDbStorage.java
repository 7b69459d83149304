package dev.weir.state.store.rocksdb;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.ByteKeys.CommitRecord;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StateStorage;
import dev.weir.state.store.StateStoreException;
import dev.weir.state.store.StateStoreException.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;
import org.rocksdb.WriteBatchWithIndex;
import org.rocksdb.WriteOptions;

/**
 * A {@link StateStorage} on one RocksDB instance in one directory; each logical store is a column
 * family.
 *
 * <h2>Staging and atomic commit</h2>
 *
 * Every write of every store goes into one {@link WriteBatchWithIndex}, the <em>staged batch</em>.
 * Reads go through it ({@code getFromBatchAndDB}, {@code newIteratorWithBase}), so a store sees its
 * own writes at once; nothing reaches RocksDB until {@link #commit(Map)} adds the commit record (a
 * sequence number and the caller's metadata) to the same batch and writes it with one
 * {@code RocksDB.write}. RocksDB applies a write batch atomically, so after a crash or a reopen the
 * directory holds exactly the last commit: never part of one, never writes staged after it. The
 * price is that staged writes live in memory until the next commit; {@link #stagedBytes()} tells
 * the caller when to commit.
 *
 * <p>Samza gets the same guarantee differently, by flushing stores before writing a checkpoint
 * (two systems, ordered); the staged batch makes it one write.
 *
 * <h2>Direct writes</h2>
 *
 * With {@link RocksDbSettings#stagedWrites()} off, puts and deletes go to RocksDB at once and a
 * commit writes only the commit record. Nothing is atomic across a crash then, but a caller that
 * restores only from {@link #checkpointTo checkpoints} taken right after a commit loses nothing:
 * such a checkpoint holds every write made before it. It is what Weir's runner does (its working
 * directories are wiped at every start), and it halves the cost of a write: the staged batch is an
 * indexed skip list that a commit copies into the memtable, another skip list.
 *
 * <h2>Resources</h2>
 *
 * Iterators hold native memory and must be closed; the storage tracks the open ones and closes
 * them before it closes RocksDB, because a RocksDB iterator that outlives its database crashes the
 * JVM.
 *
 * <p>Threading: confined to one thread at a time (the staged batch is not thread-safe), except
 * {@link #stagedBytes()}.
 */
public final class RocksDbStorage implements StateStorage {

  static {
    RocksDB.loadLibrary();
  }

  /** Column family holding the commit record; not visible as a store. */
  static final String COMMIT_FAMILY = "__weir.commit";

  private static final byte[] COMMIT_KEY = "commit".getBytes(UTF_8);

  private final Path directory;
  private final RocksDbSettings settings;
  private final LRUCache blockCache;
  private final BloomFilter bloomFilter;
  private final DBOptions dbOptions;
  private final ColumnFamilyOptions familyOptions;
  final ReadOptions readOptions;
  private final WriteOptions commitOptions;
  /** Options of direct writes (never synced; the commit record's write syncs if asked). */
  final WriteOptions writeOptions;
  /** {@link RocksDbSettings#stagedWrites()}. */
  final boolean staging;
  final RocksDB db;
  private final ColumnFamilyHandle defaultFamily;
  private final ColumnFamilyHandle commitFamily;
  /** All open stores by name. Only from the owning thread. */
  private final Map<String, RocksDbStore> stores = new LinkedHashMap<>();
  /** Open iterators and snapshots, closed with the storage. Only from the owning thread. */
  private final Set<AutoCloseable> openResources = Collections.newSetFromMap(new IdentityHashMap<>());

  /** Writes since the last commit. Only from the owning thread. */
  final WriteBatchWithIndex staged = new WriteBatchWithIndex(true);
  /** Number of writes in {@link #staged}; 0 lets reads skip the batch. Only from the owning thread. */
  long stagedCount;
  /**
   * Approximate bytes in {@link #staged}; written by the owning thread only. Deliberately not
   * volatile (it changes on every staged write): other threads may read a stale value.
   */
  private long stagedBytes;
  /**
   * A filter of the keys in {@link #staged} (one bit per hash of store and key; never a false
   * "not staged"), so a read can tell, without touching the batch, that another thread may read
   * a key from the database ({@link RocksDbStore#readableOffOwner}). Kept only once someone asks
   * (null until then: a job without reads off the container thread pays nothing per write);
   * cleared at each commit. Only from the owning thread.
   */
  private long[] stagedKeys;
  /** Whether every write now in {@link #staged} is in {@link #stagedKeys} (kept since the batch was last empty). */
  private boolean stagedKeysComplete;
  /** Bits in {@link #stagedKeys}: 2^20 (128 KiB), about 1% false "maybe staged" at 10,000 staged keys. */
  private static final int STAGED_FILTER_SHIFT = 20;
  private static final int STAGED_FILTER_BITS = 1 << STAGED_FILTER_SHIFT;

  private CommitRecord lastCommit;
  private boolean closed;

  private RocksDbStorage(Path directory, RocksDbSettings settings) {
    this.directory = directory;
    this.settings = settings;
    this.blockCache = new LRUCache(settings.blockCacheBytes());
    this.bloomFilter = settings.bloomBitsPerKey() > 0 ? new BloomFilter(settings.bloomBitsPerKey(), false) : null;
    BlockBasedTableConfig table = new BlockBasedTableConfig()
        .setBlockCache(blockCache)
        .setBlockSize(settings.blockSizeBytes());
    if (bloomFilter != null) {
      table.setFilterPolicy(bloomFilter);
    }
    this.familyOptions = new ColumnFamilyOptions()
        .setTableFormatConfig(table)
        .setCompressionType(settings.compression())
        .setWriteBufferSize(settings.writeBufferBytes())
        .setMaxWriteBufferNumber(settings.maxWriteBuffers());
    this.dbOptions = new DBOptions()
        .setCreateIfMissing(true)
        .setCreateMissingColumnFamilies(true)
        .setMaxBackgroundJobs(settings.maxBackgroundJobs());
    this.readOptions = new ReadOptions();
    this.commitOptions = new WriteOptions().setSync(settings.syncCommits()).setDisableWAL(!settings.writeAheadLog());
    this.writeOptions = new WriteOptions().setDisableWAL(!settings.writeAheadLog());
    this.staging = settings.stagedWrites();

    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    for (byte[] family : existingFamilies()) {
      descriptors.add(new ColumnFamilyDescriptor(family, familyOptions));
    }
    if (descriptors.stream().noneMatch(d -> Arrays.equals(d.getName(), RocksDB.DEFAULT_COLUMN_FAMILY))) {
      descriptors.add(0, new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, familyOptions));
    }
    if (descriptors.stream().noneMatch(d -> new String(d.getName(), UTF_8).equals(COMMIT_FAMILY))) {
      descriptors.add(new ColumnFamilyDescriptor(COMMIT_FAMILY.getBytes(UTF_8), familyOptions));
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try {
      this.db = RocksDB.open(dbOptions, directory.toString(), descriptors, handles);
    } catch (RocksDBException e) {
      releaseOptions();
      throw classify(e, "cannot open RocksDB state storage");
    }
    ColumnFamilyHandle commit = null;
    ColumnFamilyHandle dflt = null;
    for (int i = 0; i < descriptors.size(); i++) {
      String name = new String(descriptors.get(i).getName(), UTF_8);
      if (name.equals(COMMIT_FAMILY)) {
        commit = handles.get(i);
      } else if (Arrays.equals(descriptors.get(i).getName(), RocksDB.DEFAULT_COLUMN_FAMILY)) {
        dflt = handles.get(i);
      } else {
        stores.put(name, new RocksDbStore(this, name, handles.get(i)));
      }
    }
    this.commitFamily = commit;
    this.defaultFamily = dflt;
    this.lastCommit = readCommitRecord();
  }

  /**
   * Opens (or creates) the storage in {@code directory}, restoring the stores and metadata of its
   * last commit.
   *
   * @param directory the directory; created if missing; one open storage per directory
   * @param settings RocksDB settings
   * @return the open storage
   * @throws StateStoreException with reason {@code LOCKED} if another process or another open
   *     storage holds the directory, {@code CORRUPT} if its files are damaged, {@code IO} otherwise;
   *     the message names the directory and RocksDB's cause
   */
  public static RocksDbStorage open(Path directory, RocksDbSettings settings) {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(settings, "settings");
    Path dir = directory.toAbsolutePath();
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new StateStoreException(Reason.IO, dir, "cannot create state directory", e);
    }
    return new RocksDbStorage(dir, settings);
  }

  private List<byte[]> existingFamilies() {
    if (!Files.exists(directory.resolve("CURRENT"))) {
      return List.of(); // a new database
    }
    try (Options options = new Options()) {
      return RocksDB.listColumnFamilies(options, directory.toString());
    } catch (RocksDBException e) {
      releaseOptions();
      throw classify(e, "cannot list the column families of RocksDB state storage");
    }
  }

  private CommitRecord readCommitRecord() {
    try {
      byte[] record = db.get(commitFamily, COMMIT_KEY);
      return record == null ? CommitRecord.NONE : ByteKeys.decodeCommitRecord(record);
    } catch (RocksDBException e) {
      close();
      throw classify(e, "cannot read the commit record");
    } catch (IllegalArgumentException e) {
      close();
      throw new StateStoreException(Reason.CORRUPT, directory, "unreadable commit record", e);
    }
  }

  @Override
  public SortedByteStore store(String name) {
    checkOpen();
    SortedByteStore.checkName(name);
    RocksDbStore store = stores.get(name);
    if (store == null) {
      try {
        ColumnFamilyHandle handle =
            db.createColumnFamily(new ColumnFamilyDescriptor(name.getBytes(UTF_8), familyOptions));
        store = new RocksDbStore(this, name, handle);
        stores.put(name, store);
      } catch (RocksDBException e) {
        throw classify(e, "cannot create store '" + name + "'");
      }
    }
    return store;
  }

  @Override
  public Set<String> storeNames() {
    checkOpen();
    return Collections.unmodifiableSet(new TreeSet<>(stores.keySet()));
  }

  @Override
  public void commit(Map<String, byte[]> metadata) {
    checkOpen();
    Objects.requireNonNull(metadata, "metadata");
    Map<String, byte[]> copy = ByteKeys.copyMetadata(metadata);
    long sequence = lastCommit.sequence() + 1;
    staged.setSavePoint();
    try {
      staged.put(commitFamily, COMMIT_KEY, ByteKeys.encodeCommitRecord(sequence, copy));
      db.write(commitOptions, staged);
    } catch (RocksDBException e) {
      try {
        staged.rollbackToSavePoint(); // keep the staged writes, drop the commit record
      } catch (RocksDBException ignored) {
        // the batch is unchanged apart from the record; a retry overwrites it
      }
      throw classify(e, "commit " + sequence + " failed");
    }
    staged.clear();
    if (stagedKeys != null) {
      if (stagedCount > 0) {
        Arrays.fill(stagedKeys, 0L);
      }
      stagedKeysComplete = true;
    }
    stagedCount = 0;
    stagedBytes = 0;
    lastCommit = new CommitRecord(sequence, copy);
  }

  /**
   * Writes a RocksDB checkpoint of the last commit into {@code target} (which must not exist):
   * live SST files are hard-linked (immutable, so the link is a copy that costs no bytes while the
   * working database moves on), the manifest and options are copied, and the memtable is flushed
   * first, so the target opens as a storage holding exactly the last commit and its metadata.
   *
   * @throws IllegalStateException if writes are staged (commit first) or the storage is closed
   * @throws StateStoreException naming {@code target} and RocksDB's cause (e.g. the disk is full)
   */
  @Override
  public void checkpointTo(Path target) {
    checkOpen();
    if (stagedCount > 0) {
      throw new IllegalStateException("cannot checkpoint " + directory + " with " + stagedCount
          + " staged writes; commit first");
    }
    try (Checkpoint checkpoint = Checkpoint.create(db)) {
      checkpoint.createCheckpoint(target.toAbsolutePath().toString());
    } catch (RocksDBException e) {
      throw new StateStoreException(Reason.IO, target, "cannot write a RocksDB checkpoint of " + directory
          + " (" + e.getMessage() + ")", e);
    }
  }

  @Override
  public Map<String, byte[]> committedMetadata() {
    return lastCommit.metadata();
  }

  @Override
  public long commitSequence() {
    return lastCommit.sequence();
  }

  @Override
  public long stagedBytes() {
    return stagedBytes;
  }

  @Override
  public Optional<Path> directory() {
    return Optional.of(directory);
  }

  @Override
  public boolean isDurable() {
    return true;
  }

  /** The settings this storage was opened with. */
  public RocksDbSettings settings() {
    return settings;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (AutoCloseable resource : new ArrayList<>(openResources)) {
      try {
        resource.close();
      } catch (Exception ignored) {
        // closing native handles does not fail in practice; keep closing the rest
      }
    }
    openResources.clear();
    for (RocksDbStore store : stores.values()) {
      store.handle.close();
    }
    if (commitFamily != null) {
      commitFamily.close();
    }
    if (defaultFamily != null) {
      defaultFamily.close();
    }
    if (db != null) {
      db.close();
    }
    staged.close();
    releaseOptions();
  }

  private void releaseOptions() {
    readOptions.close();
    commitOptions.close();
    writeOptions.close();
    dbOptions.close();
    familyOptions.close();
    if (bloomFilter != null) {
      bloomFilter.close();
    }
    blockCache.close();
  }

  // ---- used by RocksDbStore, on the owning thread ----

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("RocksDB state storage " + directory + " is closed");
    }
  }

  void staged(int storeId, byte[] key, int valueBytes) {
    stagedCount++;
    stagedBytes += key.length + valueBytes;
    if (stagedKeys != null) {
      int bit = stagedBit(storeId, key);
      stagedKeys[bit >>> 6] |= 1L << bit;
    }
  }

  /**
   * Whether a write of {@code key} in the store with {@code storeId} may be in {@link #staged}.
   * The first call starts the filter of staged keys; until the batch is next empty, every staged
   * write counts as maybe {@code key}.
   */
  boolean mightBeStaged(int storeId, byte[] key) {
    if (stagedKeys == null) {
      stagedKeys = new long[STAGED_FILTER_BITS / 64];
      stagedKeysComplete = stagedCount == 0;
    }
    if (stagedCount == 0) {
      return false;
    }
    if (!stagedKeysComplete) {
      return true;
    }
    int bit = stagedBit(storeId, key);
    return (stagedKeys[bit >>> 6] & (1L << bit)) != 0;
  }

  private static int stagedBit(int storeId, byte[] key) {
    int h = (31 * storeId + Arrays.hashCode(key)) * 0x9E3779B9; // Fibonacci hashing: the top bits mix all
    return h >>> (32 - STAGED_FILTER_SHIFT);
  }

  void opened(AutoCloseable resource) {
    openResources.add(resource);
  }

  void closed(AutoCloseable resource) {
    openResources.remove(resource);
  }

  Path directoryPath() {
    return directory;
  }

  /** Maps a RocksDB failure to an exception that names the directory and the reason. */
  StateStoreException classify(RocksDBException e, String what) {
    Status status = e.getStatus();
    String message = String.valueOf(e.getMessage());
    Reason reason;
    if (message.contains("lock") || message.contains("LOCK")) {
      reason = Reason.LOCKED;
      what = what + " (locked by another process or an open storage in this process)";
    } else if (status != null && status.getCode() == Status.Code.Corruption
        || message.contains("orrupt")) {
      reason = Reason.CORRUPT;
      what = what + " (corrupt)";
    } else {
      reason = Reason.IO;
    }
    return new StateStoreException(reason, directory, what, e);
  }
}
