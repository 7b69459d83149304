package dev.weir.runner.checkpoint;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import org.apache.beam.sdk.annotations.Internal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The checkpoints of one durable job on disk, and how a job is restored from them.
 *
 * <h2>Layout</h2>
 *
 * <pre>
 * &lt;job directory&gt;/checkpoints/chk-000000000007/container-0/   a RocksDB checkpoint of container 0
 *                                                 container-1/
 *                                                 checkpoint.json  the manifest, written last
 * </pre>
 *
 * While its parts are written, a checkpoint directory holds a marker, {@value #IN_PROGRESS}. A
 * checkpoint is <em>complete</em> once its manifest exists: the manifest is written to a
 * temporary file, forced to disk, and renamed into place (atomic on POSIX file systems), and the
 * directory is forced, so a crash leaves either no manifest or a whole one. The manifest names the
 * job's {@link PlanFingerprint} and every file of the checkpoint with its size and CRC32, so a
 * restore can tell a damaged checkpoint (a truncated or changed file) from a good one. The marker
 * is deleted after the manifest is in place, so a directory with neither was completed and then
 * lost its manifest: it counts as damaged, not as never written.
 *
 * <h2>Restore</h2>
 *
 * {@link #restoreLatest} walks the complete checkpoints newest first, verifies each file against
 * the manifest, and uses the first checkpoint that verifies: a damaged one is skipped with a
 * warning naming the file. Its container directories become the job's working directories:
 * RocksDB's SST files are hard-linked (they are never changed in place, and deleting the working
 * link after a compaction leaves the checkpoint's link), everything else is copied. If checkpoints
 * were completed but none verifies (including one whose manifest is gone), the restore fails naming
 * them; a job never silently starts empty over checkpoints it could not read.
 *
 * <p>Cost: SST files are shared between consecutive checkpoints; their CRC32 is computed once per
 * file and remembered ({@link #crcCache}), so a checkpoint reads only the files it has not seen.
 *
 * <p>Threading: {@link #complete} runs on the one container thread that completes a checkpoint
 * (the coordinator serializes them); {@link #restoreLatest} and {@link #deleteAll} before the
 * containers start.
 */
@Internal
public final class CheckpointStore {
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointStore.class);
  /** The manifest's file name in a checkpoint directory. */
  public static final String MANIFEST = "checkpoint.json";
  /**
   * A marker file in a checkpoint directory while its parts are being written, deleted once the
   * manifest is in place: a directory with neither marker nor manifest lost its manifest.
   */
  static final String IN_PROGRESS = "checkpoint.in-progress";
  private static final Pattern NAME = Pattern.compile("chk-(\\d{12})");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One file of a checkpoint: its path relative to the checkpoint directory, size in bytes and CRC32. */
  public record FileEntry(String path, long size, long crc32) {}

  /**
   * A checkpoint's manifest.
   *
   * @param id the checkpoint's number, from 1, rising
   * @param jobName the job's name
   * @param createdAtMs wall-clock epoch ms when it completed
   * @param plan the {@link PlanFingerprint} lines of the job that wrote it
   * @param containers containers whose storage it holds ({@code container-<n>} directories)
   * @param files every file under the checkpoint directory except the manifest
   * @param sourceParallelism the number of splits the job asked its sources for (its
   *     {@code --parallelism}, or that of the checkpoint it resumed): a job resuming this checkpoint
   *     at another parallelism asks for as many, to find the same splits
   */
  public record Manifest(long id, String jobName, long createdAtMs, List<String> plan, int containers,
      List<FileEntry> files, int sourceParallelism) {
    /** Total bytes of the checkpoint's files (hard-linked files count in full). */
    public long sizeBytes() {
      return files.stream().mapToLong(FileEntry::size).sum();
    }
  }

  /**
   * A checkpoint chosen for a restore.
   *
   * @param manifest its manifest
   * @param directory its directory
   */
  public record Restored(Manifest manifest, Path directory) {}

  private final Path root;
  private final String jobName;
  private final int retain;
  /** CRC32 of immutable (SST) files already read, by absolute path. */
  private final Map<String, Long> crcCache = new HashMap<>();

  /**
   * @param jobDirectory the job's durable directory; checkpoints go to its {@code checkpoints}
   * @param jobName the job's name, recorded in manifests
   * @param retain complete checkpoints kept (the newest), at least 1
   */
  public CheckpointStore(Path jobDirectory, String jobName, int retain) {
    this.root = jobDirectory.resolve("checkpoints");
    this.jobName = jobName;
    this.retain = Math.max(1, retain);
  }

  /** Where checkpoints live. */
  public Path root() {
    return root;
  }

  /** The directory of checkpoint {@code id} (not created here). */
  public Path directory(long id) {
    return root.resolve(String.format("chk-%012d", id));
  }

  /** The directory of container {@code container}'s storage in checkpoint {@code id}. */
  public Path containerDirectory(long id, int container) {
    return directory(id).resolve("container-" + container);
  }

  /**
   * Creates the (empty) directory of checkpoint {@code id}, deleting what an interrupted attempt with
   * the same id left.
   *
   * @throws UncheckedIOException naming the path if it cannot be created
   */
  public Path prepare(long id) {
    Path dir = directory(id);
    try {
      deleteTree(dir);
      Files.createDirectories(dir);
      Files.createFile(dir.resolve(IN_PROGRESS));
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the checkpoint directory " + dir + " (" + e + ")", e);
    }
  }

  /**
   * Completes checkpoint {@code id}, whose container directories are written: lists and checksums
   * its files, writes the manifest atomically, then deletes complete checkpoints beyond the
   * {@code retain} newest and incomplete ones older than this.
   *
   * @return the manifest written
   * @throws UncheckedIOException naming the path if a file cannot be read or the manifest written
   *     (the checkpoint then stays incomplete; older ones are untouched)
   */
  public Manifest complete(long id, PlanFingerprint plan, int containers) {
    return complete(id, plan, containers, 0);
  }

  /**
   * As {@link #complete(long, PlanFingerprint, int)}, recording the number of splits the job asked
   * its sources for ({@link Manifest#sourceParallelism}).
   */
  public Manifest complete(long id, PlanFingerprint plan, int containers, int sourceParallelism) {
    Path dir = directory(id);
    Manifest manifest;
    try {
      manifest = new Manifest(id, jobName, System.currentTimeMillis(), plan.lines(), containers, listFiles(dir, true),
          sourceParallelism);
      Path tmp = dir.resolve(MANIFEST + ".tmp");
      Files.write(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest));
      force(tmp, false);
      try {
        Files.move(tmp, dir.resolve(MANIFEST), StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, dir.resolve(MANIFEST), StandardCopyOption.REPLACE_EXISTING);
      }
      force(dir, true);
      Files.deleteIfExists(dir.resolve(IN_PROGRESS));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot complete checkpoint " + dir + " (" + e + ")", e);
    }
    prune(id);
    return manifest;
  }

  /** Ids of the checkpoint directories under {@link #root()}, complete or not, ascending. */
  public List<Long> ids() {
    List<Long> ids = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return ids;
    }
    try (Stream<Path> children = Files.list(root)) {
      children.forEach(p -> {
        Matcher m = NAME.matcher(p.getFileName().toString());
        if (m.matches()) {
          ids.add(Long.parseLong(m.group(1)));
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the checkpoints in " + root + " (" + e + ")", e);
    }
    ids.sort(Comparator.naturalOrder());
    return ids;
  }

  /**
   * Restores the newest checkpoint that verifies into {@code working(container)} directories (see the
   * class comment); returns null if there is no complete checkpoint at all.
   *
   * @param plan the starting job's plan, checked against the checkpoint's
   * @param working the working directory of each container (deleted and recreated)
   * @throws IllegalStateException if the newest usable checkpoint was written by another plan (naming
   *     the first difference), or if complete checkpoints exist but none verifies (naming them)
   */
  public Restored restoreLatest(PlanFingerprint plan, java.util.function.IntFunction<Path> working) {
    return restoreLatest(plan, -1, working, null);
  }

  /**
   * As {@link #restoreLatest(PlanFingerprint, java.util.function.IntFunction)}, into a job of
   * {@code containers} containers: a checkpoint of the same plan written by as many is restored as
   * files; one of another number of containers, or of another plan (another parallelism, or an
   * upgraded pipeline whose state {@link PlanUpgrade} places by PTransform name), through
   * {@code rescale}, which re-addresses its entries.
   *
   * @param containers the starting job's containers; -1 for the checkpoint's own number
   * @param rescale restores a checkpoint of another number of containers; null to refuse one
   * @throws IllegalStateException as the other overload; if the checkpoint has another number of
   *     containers or plan and {@code rescale} is null; and if {@code rescale} finds state it cannot
   *     place (naming the PTransforms)
   */
  Restored restoreLatest(PlanFingerprint plan, int containers, java.util.function.IntFunction<Path> working,
      RescaledRestore rescale) {
    List<Long> ids = ids();
    List<String> damaged = new ArrayList<>();
    for (int i = ids.size() - 1; i >= 0; i--) {
      Path dir = directory(ids.get(i));
      Path manifestPath = dir.resolve(MANIFEST);
      if (!Files.exists(manifestPath)) {
        if (Files.exists(dir.resolve(IN_PROGRESS))) {
          LOG.info("Checkpoint {} is incomplete (it was being written when the job ended); skipped", dir);
        } else {
          LOG.warn("Checkpoint {} has no manifest {} although it was completed; falling back to an older "
              + "checkpoint", dir, manifestPath);
          damaged.add(dir + " has lost its manifest " + MANIFEST);
        }
        continue;
      }
      Manifest manifest;
      try {
        manifest = JSON.readValue(manifestPath.toFile(), Manifest.class);
      } catch (IOException e) {
        LOG.warn("Checkpoint {} has an unreadable manifest {} ({}); falling back to an older checkpoint", dir,
            manifestPath, e.toString());
        damaged.add(manifestPath + " (" + e.getMessage() + ")");
        continue;
      }
      String problem = verify(dir, manifest);
      if (problem != null) {
        LOG.warn("Checkpoint {} is damaged: {}; falling back to an older checkpoint", dir, problem);
        damaged.add(problem);
        continue;
      }
      restoreInto(dir, manifest, plan, containers, working, rescale);
      return new Restored(manifest, dir);
    }
    if (!damaged.isEmpty()) {
      throw new IllegalStateException("Cannot restore the job from " + root + ": every completed checkpoint is "
          + "damaged: " + String.join("; ", damaged) + ". Start with --restoreMode=NONE to discard them and "
          + "start fresh");
    }
    return null;
  }

  /**
   * Restores the verified checkpoint {@code dir} into the working directories: checks its format and
   * plan against {@code plan}, then copies its files (same plan and containers) or re-addresses its
   * entries ({@code rescale}).
   */
  private void restoreInto(Path dir, Manifest manifest, PlanFingerprint plan, int containers,
      java.util.function.IntFunction<Path> working, RescaledRestore rescale) {
    PlanFingerprint written = new PlanFingerprint(manifest.plan());
    if (written.layoutVersion() != plan.layoutVersion()) {
      throw new IllegalStateException("Cannot restore checkpoint " + dir + ": its state is in Weir's state format "
          + "version " + written.layoutVersion() + ", and this Weir reads version " + plan.layoutVersion()
          + " (keyed state addressed by key group and PTransform name since version 3, ParDo state by the name the "
          + "user gave since version 4, no key-group prefix in stored keys since version 5). Drain or finish the job "
          + "with the Weir that wrote the checkpoint, or start it fresh with --restoreMode=NONE (its state is "
          + "then discarded)");
    }
    if (written.maxParallelism() != plan.maxParallelism()) {
      throw new IllegalStateException("Cannot restore checkpoint " + dir + ": its keyed state is in "
          + written.maxParallelism() + " key groups and the job has --maxParallelism=" + plan.maxParallelism()
          + " (fixed for a job's life). Start with --maxParallelism=" + written.maxParallelism()
          + ", or with --restoreMode=NONE to discard the checkpoints and start fresh");
    }
    String difference = written.firstDifference(plan);
    if (difference == null && (containers < 0 || containers == manifest.containers())) {
      for (int c = 0; c < manifest.containers(); c++) {
        copyPart(dir, c, working.apply(c));
      }
    } else if (rescale != null) {
      rescale.restore(dir, written, manifest.containers(), (c, into) -> copyPart(dir, c, into),
          root.resolveSibling("rescale-scratch"), working);
    } else {
      throw new IllegalStateException("Cannot restore checkpoint " + dir + " of " + manifest.containers()
          + " containers into " + containers + (difference == null ? "" : ": it was written by another pipeline, "
          + difference) + " (no rescaling or upgrade here). Start with --restoreMode=NONE to discard the "
          + "checkpoints and start fresh");
    }
  }

  /**
   * Restores checkpoint directory {@code dir}, of any job ({@code --restoreFrom}), into the working
   * directories, as {@link #restoreLatest} restores one of this job's.
   *
   * @throws IllegalStateException naming the path if its manifest cannot be read or a file is
   *     damaged, and as {@link #restoreLatest} for another plan
   */
  Restored restoreFrom(Path dir, PlanFingerprint plan, int containers, java.util.function.IntFunction<Path> working,
      RescaledRestore rescale) {
    Manifest manifest;
    try {
      manifest = JSON.readValue(dir.resolve(MANIFEST).toFile(), Manifest.class);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot restore from " + dir + ": its manifest " + dir.resolve(MANIFEST)
          + " cannot be read (" + e.getMessage() + ")", e);
    }
    String problem = verify(dir, manifest);
    if (problem != null) {
      throw new IllegalStateException("Cannot restore from " + dir + ": it is damaged: " + problem);
    }
    restoreInto(dir, manifest, plan, containers, working, rescale);
    return new Restored(manifest, dir);
  }

  /**
   * The {@link Manifest#sourceParallelism} of the complete checkpoint in {@code dir}, or 0 if its
   * manifest cannot be read or recorded none.
   */
  public static int sourceParallelismOf(Path dir) {
    try {
      return JSON.readValue(dir.resolve(MANIFEST).toFile(), Manifest.class).sourceParallelism();
    } catch (IOException e) {
      return 0; // the restore itself names the problem
    }
  }

  /**
   * The {@link Manifest#sourceParallelism} of the newest complete checkpoint under {@code jobDirectory}
   * whose manifest can be read, or 0 if there is none (or it recorded none). Reads only: safe
   * before the job takes its directory's lock.
   */
  public static int newestSourceParallelism(Path jobDirectory) {
    CheckpointStore store = new CheckpointStore(jobDirectory, "", 1);
    List<Long> ids = store.ids();
    for (int i = ids.size() - 1; i >= 0; i--) {
      Path manifest = store.directory(ids.get(i)).resolve(MANIFEST);
      if (Files.exists(manifest)) {
        try {
          return JSON.readValue(manifest.toFile(), Manifest.class).sourceParallelism();
        } catch (IOException e) {
          // damaged: the restore itself names it; an older one may be taken
        }
      }
    }
    return 0;
  }

  /** Deletes every checkpoint (for {@code --restoreMode=NONE}). */
  public void deleteAll() {
    try {
      deleteTree(root);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete the checkpoints in " + root + " (" + e + ")", e);
    }
  }

  /** The first file that differs from {@code manifest}, as a sentence naming its path; null if all match. */
  private String verify(Path dir, Manifest manifest) {
    for (FileEntry entry : manifest.files()) {
      Path file = dir.resolve(entry.path());
      try {
        long size = Files.size(file);
        if (size != entry.size()) {
          return "file " + file + " has " + size + " bytes, the manifest says " + entry.size();
        }
        long crc = crc32(file, false);
        if (crc != entry.crc32()) {
          return "file " + file + " has CRC32 " + Long.toHexString(crc) + ", the manifest says "
              + Long.toHexString(entry.crc32());
        }
      } catch (NoSuchFileException e) {
        return "file " + file + " is missing";
      } catch (IOException e) {
        return "file " + file + " cannot be read (" + e + ")";
      }
    }
    return null;
  }

  /**
   * Makes {@code to} a copy of container {@code c}'s part of checkpoint {@code dir}: SST files
   * hard-linked (copied on file systems without links), the rest copied.
   *
   * @throws UncheckedIOException naming both paths
   */
  private static void copyPart(Path dir, int c, Path to) {
    Path from = dir.resolve("container-" + c);
    try {
      deleteTree(to);
      Files.createDirectories(to);
      try (Stream<Path> files = Files.list(from)) {
        for (Path file : (Iterable<Path>) files::iterator) {
          Path target = to.resolve(file.getFileName().toString());
          if (file.getFileName().toString().endsWith(".sst")) {
            try {
              Files.createLink(target, file);
              continue;
            } catch (IOException | UnsupportedOperationException e) {
              // another file system: copy instead
            }
          }
          Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot restore " + from + " into " + to + " (" + e + ")", e);
    }
  }

  private List<FileEntry> listFiles(Path dir, boolean useCache) throws IOException {
    List<FileEntry> files = new ArrayList<>();
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path file : (Iterable<Path>) paths.sorted()::iterator) {
        String name = file.getFileName().toString();
        if (!Files.isRegularFile(file) || name.startsWith(MANIFEST) || name.equals(IN_PROGRESS)) {
          continue;
        }
        files.add(new FileEntry(dir.relativize(file).toString(), Files.size(file), crc32(file, useCache)));
      }
    }
    return files;
  }

  /** CRC32 of a file; SST files (immutable) are read once per path while {@code useCache}. */
  private long crc32(Path file, boolean useCache) throws IOException {
    boolean immutable = useCache && file.getFileName().toString().endsWith(".sst");
    String key = immutable ? Files.readAttributes(file, "unix:ino").get("ino") + ":" + Files.size(file) : null;
    if (key != null) {
      Long cached = crcCache.get(key);
      if (cached != null) {
        return cached;
      }
    }
    CRC32 crc = new CRC32();
    byte[] buffer = new byte[64 * 1024];
    try (InputStream in = Files.newInputStream(file)) {
      int n;
      while ((n = in.read(buffer)) > 0) {
        crc.update(buffer, 0, n);
      }
    }
    if (key != null) {
      crcCache.put(key, crc.getValue());
    }
    return crc.getValue();
  }

  /** Keeps the {@code retain} newest complete checkpoints up to {@code newest}; deletes the rest at or below it. */
  private void prune(long newest) {
    int kept = 0;
    List<Long> ids = ids();
    for (int i = ids.size() - 1; i >= 0; i--) {
      long id = ids.get(i);
      if (id > newest) {
        continue;
      }
      boolean complete = Files.exists(directory(id).resolve(MANIFEST));
      if (complete && kept < retain) {
        kept++;
        continue;
      }
      try {
        deleteTree(directory(id));
      } catch (IOException e) {
        LOG.warn("Cannot delete the old checkpoint {}", directory(id), e);
      }
    }
  }

  private static void force(Path path, boolean directory) throws IOException {
    try (FileChannel channel = FileChannel.open(path, directory ? StandardOpenOption.READ : StandardOpenOption.WRITE)) {
      channel.force(true);
    } catch (IOException e) {
      if (!directory) {
        throw e; // some file systems cannot open a directory for fsync; the rename is still atomic
      }
    }
  }

  /**
   * Deletes {@code root} and everything under it, deepest first; a missing root (or a file gone
   * meanwhile) is fine.
   *
   * @throws IOException naming the path that could not be deleted
   */
  public static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        try {
          Files.deleteIfExists(path);
        } catch (NoSuchFileException | FileAlreadyExistsException e) {
          // gone already
        }
      }
    }
  }
}
