package dev.weir.runner.samza;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.samza.Partition;
import org.apache.samza.system.StreamSpec;
import org.apache.samza.system.StreamValidationException;
import org.apache.samza.system.SystemAdmin;
import org.apache.samza.system.SystemStream;
import org.apache.samza.system.SystemStreamMetadata;
import org.apache.samza.system.SystemStreamMetadata.SystemStreamPartitionMetadata;
import org.apache.samza.system.SystemStreamPartition;

/**
 * The {@link SystemAdmin} of a Weir system: knows the system's streams and their partition counts
 * from the job plan (a source stream has one partition per split; an in-process stream the
 * partition count of its plan). Streams exist because the plan says so: {@link #createStream}
 * creates nothing.
 *
 * <p>Offsets: a source split's offsets are its positions ({@link BeamSourceSystemFactory}); an
 * in-process stream has none. Partition metadata reports null oldest/newest/upcoming offsets (a
 * fresh start reads from the beginning), the offset after a position is the position itself (it
 * already means "after the last element it covers"), and offsets compare only when equal (0);
 * otherwise they are incomparable (null), which samza-core treats as caught up.
 *
 * <p>Threading: immutable after construction; any thread.
 */
final class WeirSystemAdmin implements SystemAdmin {
  private static final SystemStreamPartitionMetadata NO_OFFSETS = new SystemStreamPartitionMetadata(null, null, null);

  private final String system;
  private final Map<String, Integer> partitionCounts;

  /**
   * @param system the system name
   * @param partitionCounts partitions of each of the system's streams, by stream name
   */
  WeirSystemAdmin(String system, Map<String, Integer> partitionCounts) {
    this.system = system;
    this.partitionCounts = Map.copyOf(partitionCounts);
  }

  /**
   * Per requested stream, its partitions (0 .. count - 1) with null offsets.
   *
   * @throws IllegalArgumentException for a stream the job does not have
   */
  @Override
  public Map<String, SystemStreamMetadata> getSystemStreamMetadata(Set<String> streamNames) {
    Map<String, SystemStreamMetadata> result = new LinkedHashMap<>();
    for (String stream : streamNames) {
      int count = partitionCount(stream);
      Map<Partition, SystemStreamPartitionMetadata> partitions = new LinkedHashMap<>();
      for (int p = 0; p < count; p++) {
        partitions.put(new Partition(p), NO_OFFSETS);
      }
      result.put(stream, new SystemStreamMetadata(stream, partitions));
    }
    return result;
  }

  @Override
  public Map<String, SystemStreamMetadata> getSystemStreamPartitionCounts(Set<String> streamNames, long cacheTtlMs) {
    return getSystemStreamMetadata(streamNames);
  }

  /**
   * Null-offset metadata for each requested partition.
   *
   * @throws IllegalArgumentException for a partition the job does not have
   */
  @Override
  public Map<SystemStreamPartition, SystemStreamPartitionMetadata> getSSPMetadata(Set<SystemStreamPartition> ssps) {
    Map<SystemStreamPartition, SystemStreamPartitionMetadata> result = new HashMap<>();
    for (SystemStreamPartition ssp : ssps) {
      checkPartition(ssp);
      result.put(ssp, NO_OFFSETS);
    }
    return result;
  }

  /** Each offset unchanged: a source position already resumes after the elements it covers. */
  @Override
  public Map<SystemStreamPartition, String> getOffsetsAfter(Map<SystemStreamPartition, String> offsets) {
    return new HashMap<>(offsets);
  }

  /**
   * 0 for equal offsets (both null or the same position); null (incomparable) otherwise: positions
   * have no order samza-core could use, and it must never see one as behind another (it would
   * drop envelopes as "not caught up").
   */
  @Override
  public Integer offsetComparator(String offset1, String offset2) {
    return java.util.Objects.equals(offset1, offset2) ? 0 : null;
  }

  /**
   * Validates that the plan has the stream; nothing is created.
   *
   * @return false (the stream already exists, by the plan)
   * @throws StreamValidationException as {@link #validateStream}
   */
  @Override
  public boolean createStream(StreamSpec spec) {
    validateStream(spec);
    return false;
  }

  /**
   * @throws StreamValidationException if the spec names another system, a stream the job does not
   *     have, or a positive partition count different from the plan's
   */
  @Override
  public void validateStream(StreamSpec spec) throws StreamValidationException {
    Integer count = partitionCounts.get(spec.getPhysicalName());
    if (!system.equals(spec.getSystemName()) || count == null) {
      throw new StreamValidationException("system " + system + " has no stream " + spec.getSystemName() + "."
          + spec.getPhysicalName() + "; its streams: " + partitionCounts.keySet());
    }
    if (spec.getPartitionCount() > 0 && spec.getPartitionCount() != count) {
      throw new StreamValidationException("stream " + system + "." + spec.getPhysicalName() + " has " + count
          + " partition(s) in the job plan, not " + spec.getPartitionCount());
    }
  }

  @Override
  public Set<SystemStream> getAllSystemStreams() {
    Set<SystemStream> streams = new LinkedHashSet<>();
    for (String stream : partitionCounts.keySet()) {
      streams.add(new SystemStream(system, stream));
    }
    return streams;
  }

  private int partitionCount(String stream) {
    Integer count = partitionCounts.get(stream);
    if (count == null) {
      throw new IllegalArgumentException("system " + system + " has no stream '" + stream + "'; its streams: "
          + partitionCounts.keySet());
    }
    return count;
  }

  /**
   * Checks that {@code ssp} is a partition of one of this system's streams (also for the consumers).
   *
   * @throws IllegalArgumentException if it is not
   */
  void checkPartition(SystemStreamPartition ssp) {
    if (!system.equals(ssp.getSystem())) {
      throw new IllegalArgumentException(ssp + " is not a partition of system " + system);
    }
    int p = ssp.getPartition().getPartitionId();
    int count = partitionCount(ssp.getStream());
    if (p < 0 || p >= count) {
      throw new IllegalArgumentException(ssp + " does not exist: stream " + ssp.getStream() + " has " + count
          + " partition(s)");
    }
  }
}
