package dev.weir.state.store.rocksdb;

import dev.weir.state.store.ByteKeys;
import dev.weir.state.store.SortedByteStore;
import dev.weir.state.store.StoreIterator;
import dev.weir.state.store.StateStoreException;
import dev.weir.state.store.StateStoreException.Reason;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.samza.checkpoint.CheckpointId;
import org.apache.samza.storage.kv.Entry;
import org.apache.samza.storage.kv.KeyValueIterator;
import org.apache.samza.storage.kv.KeyValueSnapshot;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;
import org.rocksdb.WBWIRocksIterator;
import org.rocksdb.WriteBatchWithIndex;

/**
 * One logical store (a column family) of a {@link RocksDbStorage}. Writes are staged in the
 * storage's batch until its commit; reads see committed data merged with the staged writes. With
 * direct writes ({@link RocksDbSettings#stagedWrites()} off) writes go to RocksDB at once and
 * nothing is ever staged.
 *
 * <p>Threading: confined to the storage's owning thread.
 */
final class RocksDbStore implements SortedByteStore {

  private final RocksDbStorage storage;
  private final String name;
  final ColumnFamilyHandle handle;
  /** Mixed into this store's keys in the storage's filter of staged keys. */
  private final int id;

  RocksDbStore(RocksDbStorage storage, String name, ColumnFamilyHandle handle) {
    this.storage = storage;
    this.id = name.hashCode();
    this.name = name;
    this.handle = handle;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public byte[] get(byte[] key) {
    Objects.requireNonNull(key, "key");
    storage.checkOpen();
    try {
      // Skip the batch lookup when nothing is staged: the common case right after a commit.
      return storage.stagedCount == 0
          ? storage.db.get(handle, storage.readOptions, key)
          : storage.staged.getFromBatchAndDB(storage.db, handle, storage.readOptions, key);
    } catch (RocksDBException e) {
      throw storage.classify(e, "get from store '" + name + "' failed");
    }
  }

  /**
   * True unless a write of {@code key} may be staged: {@link RocksDB#get} is thread-safe and sees
   * everything committed, but not the staged batch, which only the owning thread may read.
   */
  @Override
  public boolean readableOffOwner(byte[] key) {
    return !storage.mightBeStaged(id, key);
  }

  /** {@link RocksDB#get} of the committed value, on any thread; see {@link SortedByteStore#getOffOwner}. */
  @Override
  public byte[] getOffOwner(byte[] key) {
    Objects.requireNonNull(key, "key");
    try {
      return storage.db.get(handle, storage.readOptions, key);
    } catch (RocksDBException e) {
      throw storage.classify(e, "get from store '" + name + "' failed");
    }
  }

  @Override
  public void put(byte[] key, byte[] value) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    storage.checkOpen();
    try {
      if (!storage.staging) {
        storage.db.put(handle, storage.writeOptions, key, value);
        return;
      }
      storage.staged.put(handle, key, value);
      storage.staged(id, key, value.length);
    } catch (RocksDBException e) {
      throw storage.classify(e, "put to store '" + name + "' failed");
    }
  }

  @Override
  public void delete(byte[] key) {
    Objects.requireNonNull(key, "key");
    storage.checkOpen();
    try {
      if (!storage.staging) {
        storage.db.delete(handle, storage.writeOptions, key);
        return;
      }
      storage.staged.delete(handle, key);
      storage.staged(id, key, 0);
    } catch (RocksDBException e) {
      throw storage.classify(e, "delete from store '" + name + "' failed");
    }
  }

  @Override
  public StoreIterator<byte[], byte[]> range(byte[] from, byte[] to) {
    Objects.requireNonNull(from, "from");
    storage.checkOpen();
    return iterate(from, to);
  }

  @Override
  public StoreIterator<byte[], byte[]> all() {
    storage.checkOpen();
    return iterate(null, null);
  }

  @Override
  public StoreIterator<byte[], byte[]> prefix(byte[] prefix) {
    Objects.requireNonNull(prefix, "prefix");
    storage.checkOpen();
    return iterate(prefix, ByteKeys.prefixEnd(prefix));
  }

  private StoreIterator<byte[], byte[]> iterate(byte[] from, byte[] to) {
    RocksIterator base = storage.db.newIterator(handle, storage.readOptions);
    RocksIterator merged =
        storage.stagedCount == 0 ? base : storage.staged.newIteratorWithBase(handle, base, storage.readOptions);
    RocksDbIterator it = new RocksDbIterator(merged, from, to, null, storage::closed);
    storage.opened(it);
    return it;
  }

  /**
   * A consistent view of {@code [from, to)} as of now: committed data at a RocksDB snapshot merged
   * with a copy of the staged writes in that range. Later writes are not visible through it.
   */
  @Override
  public KeyValueSnapshot<byte[], byte[]> snapshot(byte[] from, byte[] to) {
    Objects.requireNonNull(from, "from");
    storage.checkOpen();
    Snapshot snapshot = storage.db.getSnapshot();
    ReadOptions options = new ReadOptions().setSnapshot(snapshot);
    WriteBatchWithIndex copy = new WriteBatchWithIndex(true);
    try (WBWIRocksIterator staged = storage.staged.newIterator(handle)) {
      for (staged.seek(from); staged.isValid(); staged.next()) {
        WBWIRocksIterator.WriteEntry entry = staged.entry();
        byte[] key = bytes(entry.getKey().data());
        if (to != null && ByteKeys.ORDER.compare(key, to) >= 0) {
          break;
        }
        switch (entry.getType()) {
          case PUT -> copy.put(handle, key, bytes(entry.getValue().data()));
          case DELETE, SINGLE_DELETE -> copy.delete(handle, key);
          default -> throw new IllegalStateException("unexpected staged write " + entry.getType());
        }
      }
    } catch (RocksDBException e) {
      copy.close();
      options.close();
      storage.db.releaseSnapshot(snapshot);
      throw storage.classify(e, "snapshot of store '" + name + "' failed");
    }
    RocksDbSnapshot view = new RocksDbSnapshot(snapshot, options, copy, from, to);
    storage.opened(view);
    return view;
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.get(out);
    return out;
  }

  /** Commits the owning storage, keeping its previous metadata. */
  @Override
  public void flush() {
    storage.commit(storage.committedMetadata());
  }

  /** Stores are closed with their storage; closing one store alone does nothing. */
  @Override
  public void close() {}

  /**
   * Creates a RocksDB checkpoint (hard links, cheap) of the whole storage's <em>committed</em>
   * state in {@code <directory>.checkpoints/<id>}.
   */
  @Override
  public Optional<Path> checkpoint(CheckpointId id) {
    Objects.requireNonNull(id, "id");
    storage.checkOpen();
    Path dir = storage.directoryPath();
    Path target = dir.resolveSibling(dir.getFileName() + ".checkpoints").resolve(id.serialize());
    try (Checkpoint checkpoint = Checkpoint.create(storage.db)) {
      Files.createDirectories(target.getParent());
      checkpoint.createCheckpoint(target.toString());
      return Optional.of(target);
    } catch (RocksDBException e) {
      throw storage.classify(e, "checkpoint " + id + " failed");
    } catch (java.io.IOException e) {
      throw new StateStoreException(Reason.IO, dir, "cannot create checkpoint directory " + target, e);
    }
  }

  /** A snapshot: owns a RocksDB snapshot, its read options and a copy of the staged writes. */
  private final class RocksDbSnapshot implements KeyValueSnapshot<byte[], byte[]>, AutoCloseable {
    private final Snapshot snapshot;
    private final ReadOptions options;
    private final WriteBatchWithIndex stagedCopy;
    private final byte[] from;
    private final byte[] to;
    private boolean closed;

    RocksDbSnapshot(Snapshot snapshot, ReadOptions options, WriteBatchWithIndex stagedCopy, byte[] from, byte[] to) {
      this.snapshot = snapshot;
      this.options = options;
      this.stagedCopy = stagedCopy;
      this.from = from;
      this.to = to;
    }

    @Override
    public StoreIterator<byte[], byte[]> iterator() {
      if (closed) {
        throw new IllegalStateException("snapshot of store '" + name + "' is closed");
      }
      storage.checkOpen();
      RocksIterator merged =
          stagedCopy.newIteratorWithBase(handle, storage.db.newIterator(handle, options), options);
      RocksDbIterator it = new RocksDbIterator(merged, from, to, null, storage::closed);
      storage.opened(it);
      return it;
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      stagedCopy.close();
      storage.db.releaseSnapshot(snapshot);
      options.close();
      storage.closed(this);
    }
  }
}
