package dev.weir.profiling;

/**
 * Where a CPU sample's time goes, for the summary's shares. A sample is attributed by walking its
 * stack (see {@link ProfileSummary#categorize}): garbage collection and RocksDB win wherever they
 * appear, then coders (a {@code Coder.encode}/{@code decode} frame anywhere), then the first frame
 * from the leaf that is not JDK, JVM-internal or kernel code decides between Weir, the user's code
 * (including Nexmark's queries) and Beam.
 */
public enum FrameCategory {
  /** Garbage-collector threads and GC work. */
  GC,
  /** RocksDB: its JNI wrapper ({@code org.rocksdb}) and native code ({@code rocksdb::}). */
  ROCKSDB,
  /** Beam coders encoding or decoding. */
  CODERS,
  /** Weir's own packages ({@code dev.weir}). */
  WEIR,
  /** The pipeline's code: DoFns and everything not Beam, Weir, JDK or a known runner. */
  USER,
  /** Beam's SDK and runners-core ({@code org.apache.beam}, Nexmark's queries excepted). */
  BEAM,
  /** Peer runners' own code (Flink, Beam's Direct runner's internals are under BEAM). */
  PEER_RUNNER,
  /** Only JDK, JVM, native or kernel frames (JIT compilers, idle threads, I/O). */
  JVM_AND_OTHER
}
