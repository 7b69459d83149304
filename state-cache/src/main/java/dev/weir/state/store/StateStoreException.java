package dev.weir.state.store;

import java.nio.file.Path;

/**
 * A state backend failed: a directory that is locked, corrupt or unreadable, or a failed read or
 * write. The message always names the directory (or the in-memory store) and the cause.
 */
public class StateStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why a storage could not be used, for callers that react differently per reason. */
  public enum Reason {
    /** Another process (or another open storage in this process) holds the directory's lock. */
    LOCKED,
    /** The directory's files are damaged or not a RocksDB database. */
    CORRUPT,
    /** Any other I/O or backend error. */
    IO
  }

  private final Reason reason;
  private final Path directory;

  /**
   * @param reason the classification of the failure
   * @param directory the storage directory concerned, or null for in-memory storage
   * @param message what was being done, without the path (it is appended)
   * @param cause the backend's exception, may be null
   */
  public StateStoreException(Reason reason, Path directory, String message, Throwable cause) {
    super(message + (directory == null ? "" : " [state directory: " + directory + "]")
        + (cause == null || cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
    this.reason = reason;
    this.directory = directory;
  }

  /** The classification of the failure. */
  public Reason reason() {
    return reason;
  }

  /** The storage directory concerned, or null for in-memory storage. */
  public Path directory() {
    return directory;
  }
}
