package dev.weir.runner.monitoring;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.weir.runner.checkpoint.CheckpointStats;
import dev.weir.runner.metrics.RunLoopMetrics;
import dev.weir.runner.metrics.StepMetrics;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.state.cache.ObjectCacheStats;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;

/**
 * The live job page's data ({@code GET /api/job}): one JSON document with the job's graph and the
 * cumulative counters at this moment; the page ({@code job.js}) polls it every second and derives
 * rates from two successive documents, so the server keeps no history but the checkpoints'.
 *
 * <p>Shape: {@code job}, {@code nowMs} and {@code startTimeMs} (epoch ms), {@code stateBackend};
 * {@code stages[]} (name, partitions, fused {@code transforms[]} in plan order, summed
 * {@code eventsIn}/{@code eventsOut}/{@code bundles}, minimum watermarks in epoch ms or null for
 * none/end of time, {@code tasks[]} with the same per task plus its container); {@code streams[]}
 * (name, kind, {@code from}/{@code to} stage, partitions, {@code queued} summed over partitions,
 * {@code maxQueued} of the fullest partition, {@code capacity} per partition); {@code containers[]}
 * (id, iterations, utilization, {@code phaseNs} per run-loop phase, {@code cache} or null, state
 * {@code commits}); {@code checkpoints} (counts, pauses in ns, last size in bytes, {@code recent[]}
 * history); {@code transforms[]} (name, elements {@code in}/{@code out}, Beam user counters and
 * gauges by {@code namespace:name}, attempted values). Units are those of the field names.
 *
 * <p>Threading: {@link #json()} from any thread, concurrently; reads only what the MBeans read.
 */
final class JobPageData {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final JobPlan plan;
  private final MonitoredJob job;

  /** @param plan the job's plan (its stages' fused PTransforms and sources) */
  JobPageData(JobPlan plan, MonitoredJob job) {
    this.plan = plan;
    this.job = job;
  }

  /** The document now, as UTF-8 JSON bytes. */
  byte[] json() {
    try {
      return JSON.writeValueAsBytes(document());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("Cannot write the job page's data", e);
    }
  }

  ObjectNode document() {
    ObjectNode doc = NODES.objectNode();
    doc.put("job", job.name());
    doc.put("nowMs", System.currentTimeMillis());
    doc.put("startTimeMs", job.startTimeMs());
    doc.put("stateBackend", job.stateBackend());
    doc.put("metricsEnabled", job.metricsEnabled());
    ArrayNode stageArray = doc.putArray("stages");
    for (int i = 0; i < job.stages().size(); i++) {
      MBeanViews.StageView view = job.stages().get(i);
      StagePlan stage = plan.stages().get(i);
      ObjectNode s = stageArray.addObject();
      s.put("name", view.name());
      s.put("partitions", stage.partitions());
      s.put("source", stage.source() == null ? null : stage.source().describe());
      ArrayNode transforms = s.putArray("transforms");
      for (NodeSpec node : stage.nodes()) {
        if (node.writesTo() == null) {
          transforms.add(node.stepName());
        }
      }
      s.put("eventsIn", view.getEventsIn());
      s.put("eventsOut", view.getEventsOut());
      s.put("bundles", view.getBundles());
      putWatermark(s, "inputWatermarkMs", view.getInputWatermarkMs());
      putWatermark(s, "outputWatermarkMs", view.getOutputWatermarkMs());
      ArrayNode tasks = s.putArray("tasks");
      for (MBeanViews.TaskView task : view.tasks()) {
        ObjectNode t = tasks.addObject();
        t.put("name", task.getTaskName());
        t.put("container", task.getContainer());
        t.put("eventsIn", task.getEventsIn());
        t.put("eventsOut", task.getEventsOut());
        t.put("bundles", task.getBundles());
        putWatermark(t, "inputWatermarkMs", task.getInputWatermarkMs());
        putWatermark(t, "outputWatermarkMs", task.getOutputWatermarkMs());
      }
    }
    ArrayNode streamArray = doc.putArray("streams");
    for (StreamStatus stream : job.streams()) {
      ObjectNode s = streamArray.addObject();
      s.put("name", stream.name());
      s.put("kind", stream.kind());
      s.put("from", stream.producerStage());
      s.put("to", stream.consumerStage());
      s.put("partitions", stream.partitions());
      long queued = 0;
      int max = 0;
      for (int p = 0; p < stream.partitions(); p++) {
        int q = stream.queued(p);
        queued += q;
        max = Math.max(max, q);
      }
      s.put("queued", queued);
      s.put("maxQueued", max);
      s.put("capacity", stream.capacity());
    }
    ArrayNode containerArray = doc.putArray("containers");
    for (ContainerStatus container : job.containers()) {
      ObjectNode c = containerArray.addObject();
      RunLoopMetrics.Snapshot loop = container.runLoop();
      c.put("id", container.id());
      c.put("tasks", container.tasks().size());
      c.put("iterations", loop.iterations());
      c.put("utilization", loop.utilization());
      ObjectNode phases = c.putObject("phaseNs");
      for (RunLoopMetrics.Phase phase : RunLoopMetrics.Phase.values()) {
        phases.put(phase.name().toLowerCase(Locale.ROOT), loop.phaseNs(phase));
      }
      c.put("commits", container.commits().commits());
      ObjectCacheStats cache = container.cache();
      if (cache == null) {
        c.putNull("cache");
      } else {
        ObjectNode k = c.putObject("cache");
        k.put("hits", cache.hits());
        k.put("misses", cache.misses());
        k.put("hitRate", cache.hitRate());
        k.put("evictions", cache.evictions());
        k.put("entries", cache.entries());
        k.put("estimatedBytes", cache.estimatedBytes());
        k.put("dirtyEntries", cache.dirtyEntries());
      }
    }
    CheckpointStats c = job.checkpoints().get();
    ObjectNode cp = doc.putObject("checkpoints");
    cp.put("completed", c.completed());
    cp.put("skipped", c.skipped());
    cp.put("lastId", c.lastCompletedId());
    cp.put("lastPauseNs", c.lastPauseNs());
    cp.put("maxPauseNs", c.maxPauseNs());
    cp.put("lastSizeBytes", c.lastSizeBytes());
    ArrayNode recent = cp.putArray("recent");
    for (CheckpointStats.Completed done : c.recent()) {
      recent.addObject().put("id", done.id()).put("completedAtMs", done.completedAtMs())
          .put("pauseNs", done.pauseNs()).put("sizeBytes", done.sizeBytes());
    }
    ArrayNode transformArray = doc.putArray("transforms");
    if (job.metricsEnabled()) {
      Map<String, ObjectNode> byName = new HashMap<>();
      for (Map.Entry<String, StepMetrics.ElementCount> e : job.metrics().elementCounts().entrySet()) {
        ObjectNode t = transformArray.addObject();
        t.put("name", e.getKey());
        t.put("in", e.getValue().in());
        t.put("out", e.getValue().out());
        t.putObject("metrics");
        byName.put(e.getKey(), t);
      }
      MetricQueryResults user = job.metrics().results().allMetrics();
      for (MetricResult<Long> counter : user.getCounters()) {
        ObjectNode t = byName.get(counter.getKey().stepName());
        if (t != null) {
          ((ObjectNode) t.get("metrics")).put(counter.getName().toString(), counter.getAttempted());
        }
      }
      for (MetricResult<org.apache.beam.sdk.metrics.GaugeResult> gauge : user.getGauges()) {
        ObjectNode t = byName.get(gauge.getKey().stepName());
        if (t != null) {
          ((ObjectNode) t.get("metrics")).put(gauge.getName().toString(), gauge.getAttempted().getValue());
        }
      }
    }
    return doc;
  }

  private static void putWatermark(ObjectNode node, String field, long ms) {
    if (PrometheusMetrics.inRange(ms)) {
      node.put(field, ms);
    } else {
      node.putNull(field);
    }
  }
}
