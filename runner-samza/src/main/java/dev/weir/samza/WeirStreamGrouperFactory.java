package dev.weir.samza;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.samza.config.Config;
import org.apache.samza.container.TaskName;
import org.apache.samza.container.grouper.stream.SystemStreamPartitionGrouper;
import org.apache.samza.container.grouper.stream.SystemStreamPartitionGrouperFactory;
import org.apache.samza.system.SystemStreamPartition;

/**
 * Weir's grouping of input partitions into Samza tasks: one task per (stage, partition), named as
 * the embedded executor names it ({@code stage-N-pP}), holding partition P of every stream the
 * stage reads (its source split P, or partition P of each intermediate topic). The stage of each
 * physical stream comes from the config ({@value SamzaJobConfig#GROUPER_PREFIX}{@code <stream>}),
 * which {@link SamzaJobConfig} writes. Samza's {@code GroupByPartition} would put partition P of
 * every stream of the job into one task, mixing stages.
 *
 * <p>Threading: stateless after construction.
 */
public final class WeirStreamGrouperFactory implements SystemStreamPartitionGrouperFactory {

  @Override
  public SystemStreamPartitionGrouper getSystemStreamPartitionGrouper(Config config) {
    Map<String, String> stageOf = config.subset(SamzaJobConfig.GROUPER_PREFIX, true);
    return ssps -> {
      Map<TaskName, Set<SystemStreamPartition>> groups = new LinkedHashMap<>();
      for (SystemStreamPartition ssp : new TreeSet<>(ssps)) {
        String stage = stageOf.get(ssp.getStream());
        if (stage == null) {
          throw new IllegalArgumentException("Weir's grouper knows no stage reading stream " + ssp.getStream()
              + " (" + ssp + "); known streams: " + stageOf.keySet());
        }
        groups.computeIfAbsent(new TaskName(stage + "-p" + ssp.getPartition().getPartitionId()),
            t -> new LinkedHashSet<>()).add(ssp);
      }
      return groups;
    };
  }
}
