package dev.weir.runner.operators.keyed;

import dev.weir.runner.state.ByteKey;
import dev.weir.runner.state.CachedStateInternals;
import dev.weir.runner.state.ContainerState;
import dev.weir.runner.state.KeyContext;
import dev.weir.runner.state.KeyContexts;
import dev.weir.runner.state.NamespaceNames;
import dev.weir.runner.state.StateCoders;
import dev.weir.runner.state.WatermarkHolds;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.StateContext;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.util.CoderUtils;

/**
 * The keys of one keyed operator instance over its container's state, shared by
 * {@link KeyedOperator} (GroupByKey, stateful ParDo) and {@link SplittableProcessOperator}.
 *
 * <h2>Key contexts</h2>
 *
 * The task receives each element with its key already encoded by the upstream shuffle writer;
 * the encoded bytes identify the key (Beam groups by encoding). Per key there is a
 * {@link KeyContext} (key object, {@link CachedStateInternals} whose cell prefix, the operator's
 * id and the encoded key, is built once per key) in a bounded {@link KeyContexts} of recently
 * used keys. Everything else about a key (state cells, timers in the store) lives in the store, so
 * a dropped context is rebuilt from the encoded key when the key is seen again
 * ({@link #get}) or one of its timers fires ({@link #decode}).
 *
 * <h2>The current key</h2>
 *
 * runners-core asks for state without naming the key (its {@code StepContext.stateInternals()},
 * a ProcessFn's state factory): the operator makes a key current ({@link #setCurrent}) before each
 * runner call, and {@link #currentState()} reads and writes that key's state.
 *
 * <p>Cost per element: one {@link ByteKey} (a wrapper of the encoded key) and a hash lookup; a
 * new context only on a miss.
 *
 * <p>Threading: the operator's container thread only.
 *
 * @param <K> the key type
 */
final class OperatorKeys<K> {
  private final Coder<K> keyCoder;
  private final KeyContexts<K> contexts = new KeyContexts<>(KeyContexts.DEFAULT_CAPACITY);
  /** The state's watermark holds, over all keys and windows. */
  private final WatermarkHolds holds = new WatermarkHolds();
  private final StateInternals currentState = new CurrentKeyState();
  private ContainerState state;
  /** The operator's state id ({@link ContainerState#operatorId}). */
  private byte[] operatorId;
  /** The operator's window coder: each key's state view finds window namespaces by it. */
  private Coder<? extends BoundedWindow> windowCoder;
  /** Encoded namespace names shared by every key's state; set in {@link #open}. */
  private NamespaceNames names;
  /** Wrappers of the state coders shared by every key's state (one check each by the object cache); set in {@link #open}. */
  private StateCoders coders;
  private String stepName;
  private KeyContext<K> current;

  /** @param keyCoder the keys' coder (the shuffle's encoding) */
  OperatorKeys(Coder<K> keyCoder) {
    this.keyCoder = keyCoder;
  }

  /**
   * Takes the operator's state id from the container's state (derived from {@code stepName}, so
   * the same on every run: committed state is found again).
   */
  void open(ContainerState state, String stepName, Coder<? extends BoundedWindow> windowCoder) {
    this.windowCoder = windowCoder;
    this.names = new NamespaceNames(windowCoder);
    this.coders = new StateCoders();
    this.state = state;
    this.stepName = stepName;
    this.operatorId = state.operatorId(stepName, "state");
    state.keyCoder(operatorId, keyCoder);
  }

  /** The container's state (storage and object cache). */
  ContainerState state() {
    return state;
  }

  /** The state's watermark holds over all keys of this operator. */
  WatermarkHolds holds() {
    return holds;
  }

  /** Encodes {@code key} as the shuffle does, for input that skipped the shuffle. */
  byte[] encode(K key) {
    try {
      return CoderUtils.encodeToByteArray(keyCoder, key);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot encode a key of " + stepName, e);
    }
  }

  /** The context of {@code key}, whose encoding is {@code keyBytes}; created if not cached. */
  KeyContext<K> get(byte[] keyBytes, K key) {
    ByteKey id = new ByteKey(keyBytes);
    KeyContext<K> known = contexts.get(id);
    return known != null ? known : newKey(key, id);
  }

  /** The context of the encoded key {@code keyBytes} (e.g. a fired timer's), decoded if not cached. */
  KeyContext<K> decode(byte[] keyBytes) {
    ByteKey id = new ByteKey(keyBytes);
    KeyContext<K> known = contexts.get(id);
    if (known != null) {
      return known;
    }
    try {
      return newKey(CoderUtils.decodeFromByteArray(keyCoder, keyBytes), id);
    } catch (CoderException e) {
      throw new IllegalStateException("cannot decode a timer's key in " + stepName, e);
    }
  }

  private KeyContext<K> newKey(K key, ByteKey id) {
    KeyContext<K> context = new KeyContext<>(key, id,
        new CachedStateInternals(key, id.bytes(), operatorId, state.store(),
            holds, windowCoder, names, coders));
    contexts.put(context);
    return context;
  }

  /** Makes {@code key} the one {@link #currentState()} refers to. */
  void setCurrent(KeyContext<K> key) {
    current = key;
  }

  /** The current key's context ({@link #setCurrent}). */
  KeyContext<K> current() {
    return current;
  }

  /** The state of whichever key is current: what runners-core's runners and cleaners see. */
  StateInternals currentState() {
    return currentState;
  }

  /**
   * A bundle of this operator ended: asks the container for a state commit (dirty cache entries
   * are written in one batch at the container's commit point).
   */
  void bundleFinished() {
    state.requestCommit();
  }

  /** Drops every cached context (the keys' state stays in the store). */
  void clear() {
    contexts.clear();
  }

  /** Contexts currently cached, at most {@link KeyContexts#DEFAULT_CAPACITY}. */
  int size() {
    return contexts.size();
  }

  private final class CurrentKeyState implements StateInternals {
    @Override
    public Object getKey() {
      return current.key();
    }

    @Override
    public <T extends State> T state(StateNamespace namespace, StateTag<T> address, StateContext<?> c) {
      return current.state().state(namespace, address, c);
    }
  }
}
