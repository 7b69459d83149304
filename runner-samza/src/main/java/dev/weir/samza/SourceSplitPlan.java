package dev.weir.samza;

import dev.weir.runner.BeamVersionCheck;
import dev.weir.runner.translation.JobPlan;
import dev.weir.runner.translation.NodeSpec;
import dev.weir.runner.translation.PlannedSplits;
import dev.weir.runner.translation.SourceSpec;
import dev.weir.runner.translation.StagePlan;
import dev.weir.runner.translation.StreamPlan;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.io.Source;
import org.apache.beam.sdk.io.UnboundedSource;
import org.apache.beam.sdk.util.SerializableUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source splits of one Samza job, planned once and read by every process: for each source
 * stage that reads a Beam source, its split objects ({@link BoundedSource}s or
 * {@link UnboundedSource}s, partition P = split P). Each SAMZA_STANDALONE process translates the
 * pipeline itself, and a source's {@code split()} need not give the same splits in every process (a
 * file pattern matched at different times, splits by estimated size, a query, anything that reads
 * the clock or the process's options); processes that each read their share of their own splits
 * would read some data twice and some never. So the first process to start publishes its splits
 * in a {@link SplitPlanStore}, and every process, itself included, reads the plan that store holds
 * first and opens split P of that plan ({@link #sourcesFor}); a restarted process reads the same
 * plan again, so the positions its tasks checkpointed resume the same splits. The plan is
 * authoritative for the number of splits too: a process whose source split into another number of
 * splits ({@link #adopt}) is translated again with the plan's splits, so its source stages, and
 * every stage and stream partitioned after them, have the plan's partition counts. SAMZA_LOCAL (one
 * process) builds the plan from its own translation ({@link #of}) and goes through the same
 * {@link #sourcesFor}, without a store.
 *
 * <p>Where the plan lives (chosen by {@link SamzaExecutionEnvironment}): by default a Kafka topic
 * of the job ({@link KafkaSplitPlanStore}: {@code <prefix>-<job>-<job.id>-plan}, one partition,
 * the first record wins), because Kafka is the one service every process of a Samza job already
 * reaches, on any machine, and it keeps the plan as long as the job's checkpoints; or a file the
 * user names ({@value #PLAN_FILE_CONFIG}, {@link FileSplitPlanStore}) for users who stage a plan on
 * a shared filesystem. Ideas: Beam's Flink runner splits a source once, on the client, and ships
 * the Java-serialized split objects to every worker in the job graph, as here (Beam's removed Samza
 * runner put the unsplit source, Base64 Java serialization, into the config and split it again in
 * every container's {@code SystemAdmin}, so it relied on a deterministic {@code split()}, the
 * problem this class removes); samza-core's ZooKeeper coordinator likewise has one leader compute
 * the {@code JobModel} and publish it for every processor to read, rather than each computing its
 * own.
 *
 * <p>Envelope (version {@value #VERSION}), big-endian: magic {@code 0x5753504C} ("WSPL"), version
 * (int), job name (UTF), who wrote it (UTF), when (long, ms since the epoch), the layout of the
 * planning process's translation (stage count (int), then each stage's partitions (int), by stage
 * id; version 1 has no layout and is still read, unchecked), the planning process's Weir build
 * (UTF, e.g. {@code dev.weir:weir-runner:0.1.0 for Beam 2.70.0}), the job's shape ({@link #shapeOf};
 * length (int) and UTF-8 bytes; versions 1 and 2 have neither and are still read, unchecked), payload
 * length (int, bytes), CRC-32C of the payload (int), payload: {@link SerializableUtils#serializeToByteArray}
 * (Java serialization, Snappy-compressed) of the list of {@link StageSplits}. A checksum or version
 * mismatch fails the start naming the store, so a torn or foreign plan is never read as splits.
 *
 * <p>The plan is also the job's record of what it is: a process that starts, or restarts, with a
 * plan made by another Weir build fails naming both builds ({@link #adopt}), and one whose
 * translation has another shape (another pipeline, other options) fails naming the first line that
 * differs ({@link #sourcesFor}), before any task reads a checkpoint or a store. The stores,
 * checkpoints and topics of a job are in its Weir's formats, and its checkpointed offsets belong to
 * its tasks; Flink likewise refuses a savepoint whose operators it cannot map unless told to drop
 * them.
 *
 * <p>Threading: immutable; built and read on the submitting thread.
 */
final class SourceSplitPlan {
  private static final Logger LOG = LoggerFactory.getLogger(SourceSplitPlan.class);
  /** User config key: a plan file shared by all processes instead of the Kafka plan topic. */
  static final String PLAN_FILE_CONFIG = "weir.source.plan.file";
  static final int MAGIC = 0x5753504C;
  static final int VERSION = 3;
  /** The oldest envelope, without the layout: still read (its layout is not checked). */
  static final int VERSION_WITHOUT_LAYOUT = 1;
  /** The envelope with the layout but without the Weir build and the job's shape: still read, those unchecked. */
  static final int VERSION_WITHOUT_SHAPE = 2;

  /**
   * One source stage's splits.
   *
   * @param stage the stage id ({@code stage-N})
   * @param step the Read transform's full name (node 0 of the stage)
   * @param unbounded whether the splits are {@link UnboundedSource}s (else {@link BoundedSource}s)
   * @param splits the split objects, partition P = element P
   */
  record StageSplits(int stage, String step, boolean unbounded, ArrayList<Source<?>> splits) implements Serializable {
    private static final long serialVersionUID = 1L;
  }

  private final String jobName;
  private final String writtenBy;
  private final long writtenAtMs;
  private final List<StageSplits> stages;
  /** Partitions of every stage of the planning process's translation, by stage id; null if unknown (version 1). */
  private final int[] layout;
  /** The planning process's Weir ({@code BeamVersionCheck.weirBuild()}); null if unknown (versions 1, 2). */
  private final String weirBuild;
  /** The planning process's job, one line per stage, node and stream ({@link #shapeOf}); null if unknown. */
  private final String shape;
  private final int encodedBytes;

  private SourceSplitPlan(String jobName, String writtenBy, long writtenAtMs, List<StageSplits> stages, int[] layout,
      String weirBuild, String shape, int encodedBytes) {
    this.jobName = jobName;
    this.writtenBy = writtenBy;
    this.writtenAtMs = writtenAtMs;
    this.stages = List.copyOf(stages);
    this.layout = layout;
    this.weirBuild = weirBuild;
    this.shape = shape;
    this.encodedBytes = encodedBytes;
  }

  /**
   * The job's shape as text, one line per stage (partitions, kind of source, inputs), node (kind,
   * step, consumers) and stream (kind, producer and consumer stages, counts): the translated job
   * without its source splits, which may differ between processes ({@link #adopt}). Two processes,
   * or a process and its restart, run the same job only if their shapes are equal.
   */
  static String shapeOf(JobPlan plan) {
    StringBuilder b = new StringBuilder();
    for (StagePlan stage : plan.stages()) {
      b.append(stage.name()).append(" [").append(stage.partitions()).append(" partition(s)]");
      if (stage.source() != null) {
        b.append(" source ").append(stage.source().getClass().getSimpleName());
      }
      for (StagePlan.Input input : stage.inputs()) {
        b.append(" reads ").append(input.stream().name()).append(" -> node ").append(input.entryNode());
        if (input.isSideInput()) {
          b.append(" (side input ").append(input.sideInput()).append(')');
        }
      }
      b.append('\n');
      for (NodeSpec node : stage.nodes()) {
        b.append(stage.name()).append(" node ").append(node.index()).append(": ").append(node.kind()).append(" '")
            .append(node.stepName()).append("' -> ").append(node.consumers().values()).append('\n');
      }
    }
    for (StreamPlan stream : plan.streams()) {
      b.append("stream ").append(stream.name()).append(": ").append(stream.kind()).append(' ')
          .append(stream.producer().name()).append(" (").append(stream.producers()).append(" producer(s)) -> ")
          .append(stream.consumer().name()).append(" (").append(stream.partitions()).append(" partition(s))\n");
    }
    return b.toString();
  }

  private static int[] layoutOf(JobPlan plan) {
    return plan.stages().stream().mapToInt(StagePlan::partitions).toArray();
  }

  /**
   * The splits of this process's translation: every stage whose source is a bounded or unbounded
   * Beam source (impulses and empty sources have nothing to split).
   *
   * @param writtenBy who plans, for the log of every process that reads the plan (e.g. processor id, pid, host)
   */
  static SourceSplitPlan of(JobPlan plan, String jobName, String writtenBy) {
    List<StageSplits> stages = new ArrayList<>();
    for (StagePlan stage : plan.stages()) {
      if (stage.source() instanceof SourceSpec.Bounded b) {
        stages.add(new StageSplits(stage.id(), step(stage), false, new ArrayList<>(b.splits())));
      } else if (stage.source() instanceof SourceSpec.Unbounded u) {
        stages.add(new StageSplits(stage.id(), step(stage), true, new ArrayList<>(u.splits())));
      }
    }
    return new SourceSplitPlan(jobName, writtenBy, System.currentTimeMillis(), stages, layoutOf(plan),
        BeamVersionCheck.weirBuild(), shapeOf(plan), -1);
  }

  private static String step(StagePlan stage) {
    return stage.nodes().isEmpty() ? stage.name() : stage.nodes().get(0).stepName();
  }

  /** This plan as if made by another Weir build (tests). */
  SourceSplitPlan withWeirBuild(String build) {
    return new SourceSplitPlan(jobName, writtenBy, writtenAtMs, stages, layout, build, shape, -1);
  }

  /** This plan with other stages (tests: a plan another translation would have made). */
  SourceSplitPlan withStages(List<StageSplits> other) {
    return new SourceSplitPlan(jobName, writtenBy, writtenAtMs, other, layout, weirBuild, shape, -1);
  }

  /** The stages' splits, in plan order. */
  List<StageSplits> stages() {
    return stages;
  }

  /** Who wrote the plan (processor id, pid and host). */
  String writtenBy() {
    return writtenBy;
  }

  /** The plan's envelope, bytes. */
  byte[] encode() {
    byte[] payload = SerializableUtils.serializeToByteArray(new ArrayList<>(stages));
    CRC32C crc = new CRC32C();
    crc.update(payload);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(payload.length + 256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(MAGIC);
      out.writeInt(VERSION);
      out.writeUTF(jobName);
      out.writeUTF(writtenBy);
      out.writeLong(writtenAtMs);
      out.writeInt(layout.length);
      for (int partitions : layout) {
        out.writeInt(partitions);
      }
      out.writeUTF(weirBuild);
      byte[] shapeBytes = shape.getBytes(StandardCharsets.UTF_8);
      out.writeInt(shapeBytes.length);
      out.write(shapeBytes);
      out.writeInt(payload.length);
      out.writeInt((int) crc.getValue());
      out.write(payload);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array stream does not fail
    }
    return bytes.toByteArray();
  }

  /**
   * Reads a plan's envelope.
   *
   * @param where the store it came from, for errors (e.g. {@code topic weir-job-1-plan on Kafka at host:9092})
   * @throws IllegalStateException naming {@code where} if the bytes are not a plan, have another
   *     version, fail their checksum or do not deserialize (e.g. a source class missing here)
   */
  static SourceSplitPlan decode(byte[] envelope, String where) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(envelope))) {
      int magic = in.readInt();
      if (magic != MAGIC) {
        throw new IllegalStateException("the split plan in " + where + " is not a Weir split plan (it starts with 0x"
            + Integer.toHexString(magic) + ", not 0x" + Integer.toHexString(MAGIC) + ")");
      }
      int version = in.readInt();
      if (version < VERSION_WITHOUT_LAYOUT || version > VERSION) {
        throw new IllegalStateException("the split plan in " + where + " has version " + version + "; this Weir ("
            + BeamVersionCheck.weirBuild() + ") reads versions " + VERSION_WITHOUT_LAYOUT + " to " + VERSION + " only "
            + "(written by another Weir version: run every process of the job on the same Weir, or start a new job.id)");
      }
      String job = in.readUTF();
      String by = in.readUTF();
      long atMs = in.readLong();
      int[] layout = null;
      String build = null;
      String shape = null;
      if (version >= VERSION_WITHOUT_SHAPE) {
        int stageCount = in.readInt();
        if (stageCount < 0 || stageCount > in.available() / 4) {
          throw new IllegalStateException("the split plan in " + where + " is corrupt: its layout has " + stageCount
              + " stage(s)");
        }
        layout = new int[stageCount];
        for (int i = 0; i < stageCount; i++) {
          layout[i] = in.readInt();
        }
      }
      if (version >= VERSION) {
        build = in.readUTF();
        int shapeLength = in.readInt();
        if (shapeLength < 0 || shapeLength > in.available()) {
          throw new IllegalStateException("the split plan in " + where + " is corrupt: its job shape has " + shapeLength
              + " byte(s), " + in.available() + " remain");
        }
        shape = new String(in.readNBytes(shapeLength), StandardCharsets.UTF_8);
      }
      int length = in.readInt();
      int checksum = in.readInt();
      if (length < 0 || length != in.available()) {
        throw new IllegalStateException("the split plan in " + where + " is corrupt: its payload has "
            + in.available() + " byte(s), its header says " + length);
      }
      byte[] payload = in.readNBytes(length);
      CRC32C crc = new CRC32C();
      crc.update(payload);
      if ((int) crc.getValue() != checksum) {
        throw new IllegalStateException("the split plan in " + where + " is corrupt: checksum 0x"
            + Integer.toHexString((int) crc.getValue()) + " of its payload, 0x" + Integer.toHexString(checksum)
            + " in its header");
      }
      Object stages;
      try {
        stages = SerializableUtils.deserializeFromByteArray(payload, "the split plan in " + where);
      } catch (RuntimeException e) {
        throw new IllegalStateException("cannot read the split plan in " + where + " (written by " + by + "): " + e
            + "; are the job's source classes on this process's classpath, in the same versions?", e);
      }
      @SuppressWarnings("unchecked")
      List<StageSplits> list = (List<StageSplits>) stages;
      return new SourceSplitPlan(job, by, atMs, list, layout, build, shape, envelope.length);
    } catch (IOException e) {
      throw new IllegalStateException("the split plan in " + where + " is truncated (" + envelope.length
          + " byte(s)): " + e, e);
    }
  }

  /**
   * What this process does with the plan ({@link #adopt}): the plan's source spec of each of this
   * translation's source stages, and the stages whose split count in the plan differs from this
   * translation's.
   *
   * @param sources the plan's source spec by stage id
   * @param byStep the same specs by the Read step's full name (to translate again with them)
   * @param adopted one line per stage whose count differs, e.g. {@code source stage stage-0 ('Read'):
   *     the plan has 4 splits, this process's source split into 3; using the plan's}; empty if none
   */
  record Adoption(Map<Integer, SourceSpec> sources, Map<String, SourceSpec> byStep, List<String> adopted) {
    /** Whether this process's source stages need the plan's partition counts (a new translation). */
    boolean changesCounts() {
      return !adopted.isEmpty();
    }

    /** The plan's splits for a translation of the pipeline ({@link PlannedSplits}). */
    PlannedSplits planned() {
      return byStep::get;
    }
  }

  /**
   * Decides how this process uses the plan: after checking that the plan was made for the same job
   * with the same source stages (each a bounded or unbounded read of the same step), every source
   * stage takes the plan's splits; where the plan has another NUMBER of splits than this process's
   * translation (its source split differently, e.g. a file pattern that matches more files by now),
   * the plan's count wins and the stage is listed in {@link Adoption#adopted()}: the caller then
   * translates the pipeline again with {@link Adoption#planned()}, so the stage gets the plan's
   * partitions and every process agrees on the job's layout.
   *
   * @param jobName this process's job name
   * @param where the store the plan came from, for errors
   * @throws IllegalStateException naming the job, the store and the stage if the plan was made for
   *     another job, lacks a source stage of this translation, has one this translation lacks, or
   *     reads a stage's source as bounded where this translation reads it as unbounded (or another step)
   */
  Adoption adopt(JobPlan plan, String jobName, String where) {
    String prefix = mismatchPrefix(jobName, where);
    String hint = "; every process of a job must run the same pipeline with the same options; to plan anew, start "
        + "a new job.id";
    if (!this.jobName.equals(jobName)) {
      throw new IllegalStateException(prefix + "it was made for job " + this.jobName + hint);
    }
    String here = BeamVersionCheck.weirBuild();
    if (weirBuild != null && !weirBuild.equals(here)) {
      throw new IllegalStateException(prefix + "it was made by Weir " + weirBuild + ", this process runs Weir " + here
          + "; every process of a job, and every restart of one, must run the same Weir, because a job's topics, "
          + "checkpoints and stores are in that Weir's formats; to run on another Weir, start a new job.id");
    }
    Map<Integer, StageSplits> byStage = new LinkedHashMap<>();
    stages.forEach(s -> byStage.put(s.stage(), s));
    SourceSplitPlan mine = of(plan, jobName, "this process");
    Map<Integer, SourceSpec> sources = new LinkedHashMap<>();
    Map<String, SourceSpec> byStep = new LinkedHashMap<>();
    List<String> adopted = new ArrayList<>();
    for (StageSplits local : mine.stages) {
      StageSplits planned = byStage.remove(local.stage());
      String stage = "stage-" + local.stage() + " ('" + local.step() + "')";
      if (planned == null) {
        throw new IllegalStateException(prefix + stage + " reads a source here but has no splits in the plan" + hint);
      }
      if (!planned.step().equals(local.step()) || planned.unbounded() != local.unbounded()) {
        throw new IllegalStateException(prefix + "stage-" + local.stage() + " is "
            + (planned.unbounded() ? "an unbounded" : "a bounded") + " read '" + planned.step() + "' in the plan and "
            + (local.unbounded() ? "an unbounded" : "a bounded") + " read '" + local.step() + "' here" + hint);
      }
      if (planned.splits().size() != local.splits().size()) {
        adopted.add("source stage " + stage + ": the plan has " + planned.splits().size() + " splits, this process's "
            + "source split into " + local.splits().size() + "; using the plan's");
      }
      SourceSpec spec = spec(planned);
      sources.put(local.stage(), spec);
      byStep.put(local.step(), spec);
    }
    if (!byStage.isEmpty()) {
      StageSplits extra = byStage.values().iterator().next();
      throw new IllegalStateException(prefix + "stage-" + extra.stage() + " ('" + extra.step() + "') has "
          + extra.splits().size() + " split(s) in the plan and reads no source in this process's translation" + hint);
    }
    return new Adoption(sources, byStep, List.copyOf(adopted));
  }

  /**
   * This plan's source specs for {@code plan}, by stage id, after the checks of {@link #adopt} and
   * two more: every source stage of {@code plan} has the plan's number of splits (true of a
   * translation made with {@link Adoption#planned()}), and every stage has the partitions it had in
   * the planning process's translation (a shuffle's stage has {@code --parallelism} partitions, so a
   * process started with another {@code --parallelism} fails here, naming the stage and both counts).
   *
   * @param jobName this process's job name
   * @param where the store the plan came from, for errors
   * @throws IllegalStateException naming the job, the store, the stage and both counts if the plan
   *     does not match this process's translation (besides what {@link #adopt} throws)
   */
  Map<Integer, SourceSpec> sourcesFor(JobPlan plan, String jobName, String where) {
    Adoption adoption = adopt(plan, jobName, where);
    for (StagePlan stage : plan.stages()) {
      SourceSpec planned = adoption.sources().get(stage.id());
      if (planned != null && planned.partitions() != stage.partitions()) {
        throw new IllegalStateException(mismatchPrefix(jobName, where) + "stage-" + stage.id() + " ('" + step(stage)
            + "') has " + planned.partitions() + " split(s) in the plan and " + stage.partitions() + " in this "
            + "process's translation; the plan's split counts are used only where the pipeline can be translated "
            + "again with them (WeirRunner)");
      }
    }
    if (layout != null) {
      int[] here = layoutOf(plan);
      for (int id = 0; id < Math.max(here.length, layout.length); id++) {
        if (id >= here.length || id >= layout.length || here[id] != layout[id]) {
          throw new IllegalStateException(mismatchPrefix(jobName, where) + (id >= here.length || id >= layout.length
              ? "the plan's job has " + layout.length + " stage(s), this process's translation " + here.length
              : "stage-" + id + " has " + layout[id] + " partition(s) in the plan's job and " + here[id] + " in this "
                  + "process's translation")
              + "; every process of a job must run the same pipeline with the same options (e.g. --parallelism); to "
              + "plan anew, start a new job.id");
        }
      }
    }
    if (shape != null) {
      String[] theirs = shape.split("\n");
      String[] mine = shapeOf(plan).split("\n");
      for (int i = 0; i < Math.max(theirs.length, mine.length); i++) {
        String a = i < theirs.length ? theirs[i] : "(nothing)";
        String b = i < mine.length ? mine[i] : "(nothing)";
        if (!a.equals(b)) {
          throw new IllegalStateException(mismatchPrefix(jobName, where) + "the jobs differ at line " + (i + 1)
              + " of their shapes: the plan's job has '" + a + "' and this process's translation '" + b
              + "'; every process of a job, and every restart of one, must run the same pipeline with the same "
              + "options; to run another pipeline, start a new job.id");
        }
      }
    }
    return adoption.sources();
  }

  private String mismatchPrefix(String jobName, String where) {
    return "job " + jobName + ": the split plan in " + where + " (written by " + writtenBy + " at "
        + Instant.ofEpochMilli(writtenAtMs) + ") does not match this process's translation: ";
  }

  @SuppressWarnings("unchecked")
  private static SourceSpec spec(StageSplits planned) {
    if (planned.unbounded()) {
      List<UnboundedSource<?, ?>> splits = new ArrayList<>();
      planned.splits().forEach(s -> splits.add((UnboundedSource<?, ?>) s));
      return new SourceSpec.Unbounded(splits);
    }
    List<BoundedSource<?>> splits = new ArrayList<>();
    planned.splits().forEach(s -> splits.add((BoundedSource<?>) s));
    return new SourceSpec.Bounded(splits);
  }

  /**
   * The plan every process of the job reads: the first one {@code store} holds; if it holds none,
   * {@code mine} is published first and the store read again, so that of concurrent publishers the
   * first record wins and every process (the losers included) uses that one.
   *
   * @throws IllegalStateException if the store holds no plan but the job has made progress (its
   *     plan was deleted: the checkpointed positions would resume different splits), or a read or
   *     write of the store fails (naming it)
   */
  static SourceSplitPlan resolve(SplitPlanStore store, SourceSplitPlan mine) {
    byte[] first = store.first();
    boolean published = false;
    if (first == null) {
      String progress = store.progressWithoutPlan();
      if (progress != null) {
        throw new IllegalStateException("job " + mine.jobName + ": " + store.describe() + " holds no split plan, but "
            + progress + ": the plan the job started with was deleted, and the checkpointed positions of its source "
            + "tasks belong to those splits; restore the plan or start the job anew with a new job.id");
      }
      byte[] envelope = mine.encode();
      store.append(envelope);
      published = true;
      first = store.first();
      if (first == null) {
        throw new IllegalStateException("job " + mine.jobName + ": " + store.describe() + " holds no split plan right "
            + "after this process wrote one");
      }
    }
    SourceSplitPlan plan = decode(first, store.describe());
    int splits = plan.stages.stream().mapToInt(s -> s.splits().size()).sum();
    LOG.info("Weir job {}: split plan of {} source stage(s), {} split(s), {} byte(s), from {}, written by {} at {}{}",
        mine.jobName, plan.stages.size(), splits, plan.encodedBytes, store.describe(), plan.writtenBy,
        Instant.ofEpochMilli(plan.writtenAtMs),
        !published ? " (read)" : plan.writtenBy.equals(mine.writtenBy) && plan.writtenAtMs == mine.writtenAtMs
            ? " (published by this process)" : " (this process's was later; the first record wins)");
    return plan;
  }
}
