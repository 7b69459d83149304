package dev.weir.samza;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A {@link SplitPlanStore} in one file ({@value SourceSplitPlan#PLAN_FILE_CONFIG}), for users who
 * stage the plan themselves (e.g. on a filesystem every process mounts, or copied next to each
 * process from a first run): the file is the job's plan. A process that finds no file writes its
 * own plan to a temporary file beside it and links it into place ({@link Files#createLink}, which
 * fails if the file exists), so of two processes starting at once the first link wins and the other
 * reads it; nothing ever replaces the file.
 *
 * <p>Threading: one thread at a time.
 */
final class FileSplitPlanStore implements SplitPlanStore {
  private final Path file;

  FileSplitPlanStore(Path file) {
    this.file = file.toAbsolutePath();
  }

  @Override
  public byte[] first() {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the split plan file " + file + " (" + SourceSplitPlan.PLAN_FILE_CONFIG
          + "): " + e, e);
    }
  }

  @Override
  public void append(byte[] envelope) {
    Path temp = null;
    try {
      Path dir = file.getParent();
      if (dir != null) {
        Files.createDirectories(dir);
      }
      temp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
      Files.write(temp, envelope);
      try {
        Files.createLink(file, temp);
      } catch (FileAlreadyExistsException lost) {
        // another process's plan is in place: it is the job's plan
      } catch (UnsupportedOperationException | IOException noLinks) {
        if (!Files.exists(file)) {
          Files.move(temp, file); // no hard links here: without REPLACE_EXISTING, never replaces a plan
          temp = null;
        }
      }
    } catch (FileAlreadyExistsException lost) {
      // the move lost to another process
    } catch (IOException e) {
      throw new IllegalStateException("cannot write the split plan file " + file + " ("
          + SourceSplitPlan.PLAN_FILE_CONFIG + ", " + envelope.length + " bytes): " + e, e);
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException e) {
          // a stray temporary file; the plan is in place
        }
      }
    }
  }

  @Override
  public String describe() {
    return "file " + file;
  }
}
