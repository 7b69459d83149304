package dev.weir.runner.task;

import org.apache.beam.sdk.annotations.Internal;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import dev.weir.runner.translation.NodeSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;

/**
 * The watermark arithmetic of one task, apart from the task that drives it (as Jet keeps its
 * {@code WatermarkCoalescer} apart from the {@code ProcessorTasklet}): pure bookkeeping over
 * longs, no operator calls, so it is tested on its own ({@code StageWatermarksTest}).
 *
 * <h2>Inputs</h2>
 *
 * Each input partition carries the watermarks and end-of-stream of several producers (the tasks
 * of the upstream stage, or one source split). An input's watermark is the minimum over its
 * producers ({@link #onProducerWatermark}); a producer's end of stream counts as the watermark
 * {@link #MAX_WATERMARK_MS} ({@link #onProducerEnd}). The task's <em>input watermark</em> is the
 * minimum over its main inputs ({@link #advanceInputWatermark}); side inputs never hold it.
 *
 * <h2>Nodes</h2>
 *
 * The stage's fused nodes are visited in topological order. A node's input watermark is the
 * task's input watermark lowered by the output watermarks of the nodes feeding it
 * ({@link #upstreamWatermarkMs}); the task delivers it ({@link #advanceNode}), asks the operator
 * for its hold and records the node's output watermark, its input watermark lowered by that hold
 * ({@link #holdNode}). So an operator holding elements (pushed back for side inputs, buffered by a
 * GroupByKey, or ready timers not yet fired) holds exactly what is downstream of it. A writer
 * node (the stage's tail feeding a stream) holds nothing: its output is its input watermark, and
 * the task's output watermark is the minimum over its writers ({@link #advanceWriter}).
 *
 * <p>Units: epoch milliseconds throughout, from {@link #MIN_WATERMARK_MS} to
 * {@link #MAX_WATERMARK_MS} (Beam's {@link BoundedWindow} bounds). Every watermark only rises.
 *
 * <p>Threading: confined to the owning task's container thread; not thread-safe.
 */
@Internal
public final class StageWatermarks {
  public static final long MIN_WATERMARK_MS = BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis();
  public static final long MAX_WATERMARK_MS = BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis();

  /** Per input, per producer: the last watermark it sent. */
  private final long[][] producerMs;
  /** Per input, per producer: whether it sent end of stream. */
  private final boolean[][] producerEnded;
  /** Per input, per producer: whether its watermark moved because the job is draining. */
  private final boolean[][] producerDrained;
  /** Whether the input watermark's move to the end of time is the drain's ({@link #drainCaused()}). */
  private boolean drainCaused;
  /** Per input: producers that ended. */
  private final int[] endedCount;
  /** Per input: the minimum over its producers. */
  private final long[] inputMs;
  /** Per input: whether it is a side input (does not hold the task's input watermark). */
  private final boolean[] sideInput;

  /** Per node: the nodes feeding it inside the stage. */
  private final int[][] predecessors;
  /** Per node: whether it writes to a stream (a stage tail). */
  private final boolean[] writer;
  /** Per node: the input watermark last delivered to it. */
  private final long[] nodeMs;
  /** Per node: its output watermark (its input watermark lowered by its hold). */
  private final long[] nodeOutputMs;
  private long inputWatermarkMs = MIN_WATERMARK_MS;
  private long outputWatermarkMs = MIN_WATERMARK_MS;

  /**
   * @param producers per input partition, the number of producers it carries
   * @param sideInput per input partition, whether it is a side input
   * @param predecessors per node (in topological order), the nodes feeding it
   * @param writer per node, whether it writes to a stream
   */
  StageWatermarks(int[] producers, boolean[] sideInput, int[][] predecessors, boolean[] writer) {
    int inputs = producers.length;
    this.producerMs = new long[inputs][];
    this.producerEnded = new boolean[inputs][];
    for (int i = 0; i < inputs; i++) {
      producerMs[i] = new long[producers[i]];
      Arrays.fill(producerMs[i], MIN_WATERMARK_MS);
      producerEnded[i] = new boolean[producers[i]];
    }
    this.producerDrained = new boolean[inputs][];
    for (int i = 0; i < inputs; i++) {
      producerDrained[i] = new boolean[producers[i]];
    }
    this.endedCount = new int[inputs];
    this.inputMs = new long[inputs];
    Arrays.fill(inputMs, MIN_WATERMARK_MS);
    this.sideInput = sideInput.clone();
    this.predecessors = predecessors;
    this.writer = writer.clone();
    this.nodeMs = new long[predecessors.length];
    this.nodeOutputMs = new long[predecessors.length];
    Arrays.fill(nodeMs, MIN_WATERMARK_MS);
    Arrays.fill(nodeOutputMs, MIN_WATERMARK_MS);
  }

  /** Per node of {@code nodes} (indexed by {@link NodeSpec#index()}): the nodes feeding it, each once. */
  static int[][] predecessorsOf(List<NodeSpec> nodes) {
    List<List<Integer>> preds = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      preds.add(new ArrayList<>());
    }
    for (NodeSpec node : nodes) {
      for (List<Integer> targets : node.consumers().values()) {
        for (int t : targets) {
          if (!preds.get(t).contains(node.index())) {
            preds.get(t).add(node.index());
          }
        }
      }
    }
    int[][] predecessors = new int[nodes.size()][];
    for (int i = 0; i < predecessors.length; i++) {
      predecessors[i] = preds.get(i).stream().mapToInt(Integer::intValue).toArray();
    }
    return predecessors;
  }

  /**
   * What a checkpoint keeps of the task's watermarks: per input, per producer, the last watermark
   * and whether it ended (node watermarks follow from them and the operators' holds, so a restored
   * task recomputes them in its first watermark pass). Big-endian: input count, then per input its
   * producer count and per producer {@code ms(8) | ended(1)}.
   */
  byte[] snapshot() {
    int size = 4;
    for (long[] producers : producerMs) {
      size += 4 + producers.length * 9;
    }
    ByteBuffer out = ByteBuffer.allocate(size).putInt(producerMs.length);
    for (int i = 0; i < producerMs.length; i++) {
      out.putInt(producerMs[i].length);
      for (int p = 0; p < producerMs[i].length; p++) {
        out.putLong(producerMs[i][p]).put((byte) (producerEnded[i][p] ? 1 : 0));
      }
    }
    return out.array();
  }

  /**
   * The watermark snapshot of a task restored at another number of partitions, or whose inputs'
   * producers changed in number, from the {@link #snapshot()}s of the old tasks of its stage: per
   * input, every new producer gets the earliest watermark any old producer of any old task had (an
   * ended producer counting as the end of time), and ends if all of them ended. At a checkpoint
   * every task of a stage saw the same producer watermarks (they are broadcast), so this loses
   * nothing but the producers' differences; a producer's real watermark, once it sends one, is at
   * least that (its keys' holds were among the old ones), and a lower one would be ignored.
   *
   * @param old the old tasks' snapshots (at least one)
   * @param producers per input, the number of producers it has now
   * @throws IllegalArgumentException if a snapshot is truncated or its inputs differ in number
   */
  public static byte[] rescale(List<byte[]> old, int[] producers) {
    long[] minMs = new long[producers.length];
    boolean[] allEnded = new boolean[producers.length];
    java.util.Arrays.fill(minMs, Long.MAX_VALUE);
    java.util.Arrays.fill(allEnded, true);
    for (byte[] snapshot : old) {
      ByteBuffer in = ByteBuffer.wrap(snapshot);
      try {
        int inputs = in.getInt();
        if (inputs != producers.length) {
          throw new IllegalArgumentException("the checkpoint has " + inputs + " inputs, the task " + producers.length);
        }
        for (int i = 0; i < inputs; i++) {
          int n = in.getInt();
          for (int p = 0; p < n; p++) {
            long ms = in.getLong();
            if (in.get() == 0) {
              allEnded[i] = false;
              minMs[i] = Math.min(minMs[i], ms);
            }
          }
        }
      } catch (BufferUnderflowException e) {
        throw new IllegalArgumentException("truncated watermark snapshot (" + snapshot.length + " bytes)", e);
      }
    }
    int size = 4;
    for (int n : producers) {
      size += 4 + n * 9;
    }
    ByteBuffer out = ByteBuffer.allocate(size).putInt(producers.length);
    for (int i = 0; i < producers.length; i++) {
      out.putInt(producers[i]);
      for (int p = 0; p < producers[i]; p++) {
        out.putLong(allEnded[i] ? MAX_WATERMARK_MS : minMs[i]).put((byte) (allEnded[i] ? 1 : 0));
      }
    }
    return out.array();
  }

  /**
   * Replays a {@link #snapshot()} onto this fresh instance: each producer's watermark and end of
   * stream as if it had just arrived. The caller then advances the input watermark as after any
   * producer watermark.
   *
   * @throws IllegalArgumentException if the snapshot's inputs or producers differ from this task's
   */
  void restore(byte[] snapshot) {
    ByteBuffer in = ByteBuffer.wrap(snapshot);
    try {
      int inputs = in.getInt();
      if (inputs != producerMs.length) {
        throw new IllegalArgumentException("the checkpoint has " + inputs + " inputs, the task " + producerMs.length);
      }
      for (int i = 0; i < inputs; i++) {
        int producers = in.getInt();
        if (producers != producerMs[i].length) {
          throw new IllegalArgumentException("input " + i + " has " + producers + " producers in the checkpoint, "
              + producerMs[i].length + " now");
        }
        for (int p = 0; p < producers; p++) {
          long ms = in.getLong();
          boolean ended = in.get() != 0;
          if (ended) {
            onProducerEnd(i, p);
          } else {
            onProducerWatermark(i, p, ms);
          }
        }
      }
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("truncated watermark snapshot (" + snapshot.length + " bytes)", e);
    }
  }

  /** Records {@code producer}'s watermark on {@code input}; the input's is the minimum over producers. */
  void onProducerWatermark(int input, int producer, long watermarkMs) {
    long[] producers = producerMs[input];
    if (watermarkMs <= producers[producer]) {
      return;
    }
    producers[producer] = watermarkMs;
    long min = Long.MAX_VALUE;
    for (long w : producers) {
      min = Math.min(min, w);
    }
    inputMs[input] = min;
  }

  /** Records {@code producer}'s end of stream on {@code input} (its watermark becomes the maximum). */
  void onProducerEnd(int input, int producer) {
    if (producerEnded[input][producer]) {
      return;
    }
    producerEnded[input][producer] = true;
    endedCount[input]++;
    onProducerWatermark(input, producer, MAX_WATERMARK_MS);
    updateDrainCaused();
  }

  /**
   * Records that {@code producer}'s watermark on {@code input} moved because the job is draining
   * (its {@code ProducerWatermark} said so); call before recording the watermark itself.
   */
  void onProducerDrained(int input, int producer) {
    if (!producerDrained[input][producer]) {
      producerDrained[input][producer] = true;
      updateDrainCaused();
    }
  }

  /**
   * Whether the task's input watermark went to the end of time because the job is draining: some
   * producer drained, and every producer of every input either drained or had ended. Timers fired
   * from then on are caused by the drain (Beam 2.73's {@code CausedByDrain}), and the task's own
   * watermarks say so downstream. A field read.
   */
  boolean drainCaused() {
    return drainCaused;
  }

  private void updateDrainCaused() {
    boolean any = false;
    for (int i = 0; i < producerDrained.length; i++) {
      for (int p = 0; p < producerDrained[i].length; p++) {
        if (!producerDrained[i][p] && !producerEnded[i][p]) {
          drainCaused = false;
          return;
        }
        any |= producerDrained[i][p];
      }
    }
    drainCaused = any;
  }

  /** Ends every producer of every input (the task was told its whole input ended). */
  void endAllInputs() {
    for (int i = 0; i < producerEnded.length; i++) {
      for (int p = 0; p < producerEnded[i].length; p++) {
        onProducerEnd(i, p);
      }
    }
  }

  /** The watermark of input {@code input}: the minimum over its producers, epoch ms. */
  long inputWatermarkMs(int input) {
    return inputMs[input];
  }

  /** Whether every producer of every input ended. */
  boolean allInputsEnded() {
    for (int i = 0; i < endedCount.length; i++) {
      if (endedCount[i] != producerEnded[i].length) {
        return false;
      }
    }
    return true;
  }

  /**
   * Recomputes the task's input watermark, the minimum over the main inputs.
   *
   * @return whether it advanced (never when the task has no main input)
   */
  boolean advanceInputWatermark() {
    long min = Long.MAX_VALUE;
    boolean anyMain = false;
    for (int i = 0; i < inputMs.length; i++) {
      if (!sideInput[i]) {
        min = Math.min(min, inputMs[i]);
        anyMain = true;
      }
    }
    if (!anyMain || min <= inputWatermarkMs) {
      return false;
    }
    inputWatermarkMs = min;
    return true;
  }

  /** The task's input watermark, epoch ms. */
  long inputWatermarkMs() {
    return inputWatermarkMs;
  }

  /** The last watermark the task's writers sent (the minimum over them), epoch ms. */
  long outputWatermarkMs() {
    return outputWatermarkMs;
  }

  /** Node {@code node}'s input watermark: the task's, lowered by its predecessors' outputs. */
  long upstreamWatermarkMs(int node) {
    long w = inputWatermarkMs;
    for (int p : predecessors[node]) {
      w = Math.min(w, nodeOutputMs[p]);
    }
    return w;
  }

  /**
   * Records {@code watermarkMs} as node {@code node}'s input watermark if it is higher.
   *
   * @return whether it advanced (the operator must be told)
   */
  boolean advanceNode(int node, long watermarkMs) {
    if (watermarkMs <= nodeMs[node]) {
      return false;
    }
    nodeMs[node] = watermarkMs;
    return true;
  }

  /** The input watermark last delivered to node {@code node}, epoch ms. */
  long nodeWatermarkMs(int node) {
    return nodeMs[node];
  }

  /** Sets node {@code node}'s output watermark: its input watermark lowered by {@code holdMs}. */
  void holdNode(int node, long holdMs) {
    nodeOutputMs[node] = Math.min(nodeMs[node], holdMs);
  }

  /** Node {@code node}'s output watermark, epoch ms. */
  long nodeOutputMs(int node) {
    return nodeOutputMs[node];
  }

  /** Whether node {@code node} writes to a stream. */
  boolean isWriter(int node) {
    return writer[node];
  }

  /** Number of nodes. */
  int nodes() {
    return nodeMs.length;
  }

  /**
   * Moves writer node {@code node} to its upstream watermark (a writer holds nothing).
   *
   * @return the watermark to send if it advanced, else {@link Long#MIN_VALUE}
   */
  long advanceWriter(int node) {
    long w = upstreamWatermarkMs(node);
    boolean advanced = w > nodeMs[node];
    if (advanced) {
      nodeMs[node] = w;
    }
    nodeOutputMs[node] = nodeMs[node];
    return advanced ? w : Long.MIN_VALUE;
  }

  /**
   * The task's output watermark as monitoring shows it, epoch ms: {@link #outputWatermarkMs()} if
   * the task has writers; else (a stage that ends in sinks) the minimum over its nodes' output
   * watermarks, below which its last nodes have emitted everything.
   */
  long monitoredOutputWatermarkMs() {
    long min = Long.MAX_VALUE;
    for (int i = 0; i < writer.length; i++) {
      if (writer[i]) {
        return outputWatermarkMs;
      }
      min = Math.min(min, nodeOutputMs[i]);
    }
    return min == Long.MAX_VALUE ? MIN_WATERMARK_MS : min;
  }

  /**
   * After every writer moved: the task's output watermark becomes the minimum over its writers if
   * that is higher (a task without writers keeps {@link #MIN_WATERMARK_MS}).
   */
  void updateOutputWatermark() {
    long output = Long.MAX_VALUE;
    for (int i = 0; i < writer.length; i++) {
      if (writer[i]) {
        output = Math.min(output, nodeMs[i]);
      }
    }
    if (output != Long.MAX_VALUE && output > outputWatermarkMs) {
      outputWatermarkMs = output;
    }
  }
}
