package dev.weir.runner.operators;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.state.CombiningState;
import org.apache.beam.sdk.state.ReadableState;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.ValueState;

/**
 * Marshals calls that a DoFn running on a worker thread makes into state and timers back to the
 * container thread that owns them, and hands back the results: the object cache behind Weir's
 * {@code StateInternals} and the task's {@code TimerInternals} are confined to the container
 * thread (single owner, no locks on the hot path), and stay so under concurrency.
 *
 * <h2>How</h2>
 *
 * {@link #onOwner} returns a {@link Proxy} of an interface whose every call, made on a worker,
 * becomes a letter in the container's mailbox ({@link ProcessElementWorkers#toLoop}); the worker
 * waits (interruptibly) until the loop ran it. Results are made safe to use on the worker before
 * they leave the owner:
 *
 * <ul>
 *   <li>a state object (a {@code State} or {@code ReadableState}, e.g. the {@code ValueState}
 *       that {@code StateInternals.state} returns, or the {@code ReadableState} of
 *       {@code isEmpty()}) becomes such a proxy itself, of every public interface it has, and a
 *       call returning its own target ({@code readLater()}) returns the proxy;
 *   <li>an {@code Iterable} read from a collection state (a bag's, a set's, a map's keys, values
 *       or entries, an ordered list's range), which may stream from the key's cells in the object
 *       cache, is copied into a list on the owner, so the worker never iterates the cache (a
 *       value of a value or combining state is handed over as it is, whatever its type);
 *   <li>anything else (values, timestamps, booleans) is handed over as it is: values read from
 *       state are the DoFn's to read, as on the container thread.
 * </ul>
 *
 * A call made on the container thread itself runs directly and returns its result as it is.
 *
 * <p>Cost: one mailbox round trip per call (a few microseconds when the loop is idle, up to one
 * pass of the loop when it is busy), so it suits DoFns that wait on services far longer than they
 * touch state. Why not a thread-safe state layer instead: the object cache's single owner is what
 * keeps its hot path free of locks and atomics for every job that does not ask for concurrency;
 * this way nothing changes for them. (Flink's asynchronous state API, FLIP-425, makes the same
 * choice of executing state requests on the task thread.)
 *
 * <p>Threading: proxies are called from worker threads (and may be from the container thread);
 * letters run on the container thread.
 */
@Internal
public final class OwnerCalls {
  private final ProcessElementWorkers workers;

  /** @param workers the container's workers (their mailbox and the loop thread's identity) */
  public OwnerCalls(ProcessElementWorkers workers) {
    this.workers = workers;
  }

  /**
   * A proxy of {@code type} whose calls run on the container thread against {@code target.get()},
   * evaluated there per call (so it may depend on container-thread state, e.g. the element's key).
   */
  @SuppressWarnings("unchecked")
  public <T> T onOwner(Class<T> type, Supplier<?> target) {
    return (T) proxy(type.getClassLoader(), new Class<?>[] {type}, type.getSimpleName(), target);
  }

  private Object proxy(ClassLoader loader, Class<?>[] types, String name, Supplier<?> target) {
    InvocationHandler handler = (proxy, method, args) -> {
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> name + " of the container thread";
        };
      }
      Object result = call(target, method, args);
      return result == SELF ? proxy : result;
    };
    return Proxy.newProxyInstance(loader, types, handler);
  }

  /** The public interfaces {@code type} implements, directly or through its superclasses and interfaces. */
  private static Class<?>[] publicInterfaces(Class<?> type) {
    java.util.Set<Class<?>> found = new java.util.LinkedHashSet<>();
    java.util.ArrayDeque<Class<?>> todo = new java.util.ArrayDeque<>();
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      todo.addAll(List.of(c.getInterfaces()));
    }
    Class<?> next;
    while ((next = todo.poll()) != null) {
      if (java.lang.reflect.Modifier.isPublic(next.getModifiers()) && found.add(next)) {
        todo.addAll(List.of(next.getInterfaces()));
      }
    }
    return found.toArray(new Class<?>[0]);
  }

  /** Runs {@code method} on the owner (directly if this is the owner) and returns its safe result. */
  private Object call(Supplier<?> target, Method method, Object[] args) throws Throwable {
    if (workers.onLoopThread()) {
      try { // already on the owner (a timer fired inline): the call as it is, nothing to make safe
        return method.invoke(target.get(), args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
    CompletableFuture<Object> result = new CompletableFuture<>();
    workers.toLoop(() -> {
      try {
        result.complete(invoke(target, method, args));
      } catch (Throwable t) {
        result.completeExceptionally(t);
      }
    });
    try {
      return result.get();
    } catch (ExecutionException e) {
      throw e.getCause();
    }
  }

  /** Stands for "the call returned its own target" across the hand-over. */
  private static final Object SELF = new Object();

  /** On the owner: the call, with its result made safe for a worker (see the class comment). */
  private Object invoke(Supplier<?> target, Method method, Object[] args) throws Throwable {
    Object on = target.get();
    Object value;
    try {
      value = method.invoke(on, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    if (value == null) {
      return null;
    }
    if (value == on) {
      return SELF; // readLater(): the worker gets its proxy back
    }
    if (value instanceof State || value instanceof ReadableState<?>) {
      Object fixed = value; // e.g. StateInternals.state(...)'s ValueState: every interface it has, marshalled
      return proxy(value.getClass().getClassLoader(), publicInterfaces(value.getClass()),
          value.getClass().getSimpleName(), () -> fixed);
    }
    if (value instanceof Iterable<?> iterable && !(on instanceof ValueState<?>) && !(on instanceof CombiningState<?, ?, ?>)) {
      // a collection state's contents (bag, set, map keys/values/entries, ordered list): they may
      // stream from the object cache; a value state's or combining state's value is the DoFn's own
      List<Object> copy = new ArrayList<>();
      for (Object element : iterable) {
        copy.add(element);
      }
      return copy;
    }
    return value;
  }
}
