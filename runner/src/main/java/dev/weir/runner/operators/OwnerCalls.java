package dev.weir.runner.operators;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
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
 * {@link #ask} runs a function on the container thread and returns its result: a letter in the
 * container's mailbox ({@link ProcessElementWorkers#toLoop}) that the worker waits for
 * (interruptibly). {@link #post} runs an action there without waiting: its letter runs before any
 * letter the same worker writes later (the mailbox is FIFO per writer), so the worker's next
 * question, and its call's completion, see its effect. {@link WorkerStateInternals} and
 * {@link WorkerTimerInternals} are built on the two.
 *
 * <p>{@link #onOwner} returns a {@link Proxy} of an interface whose calls, made on a worker, run
 * on the container thread: a method returning nothing (a state's {@code write}, {@code add},
 * {@code clear}) is posted, any other is asked; {@code readLater()} is answered on the worker
 * (the object cache has nothing to prefetch). Results are made safe to use on the worker before
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
 * <p>Cost: one mailbox round trip per read (a few microseconds when the loop is idle, up to one
 * pass of the loop when it is busy; mostly the two threads' wake-ups), one letter per write, so it
 * suits DoFns that wait on services far longer than they touch state. A posted action that throws
 * fails the job with its exception, since the worker has moved on. Why not a thread-safe state layer instead: the object cache's single owner is what
 * keeps its hot path free of locks and atomics for every job that does not ask for concurrency;
 * this way nothing changes for them. (Flink's asynchronous state API, FLIP-425, makes the same
 * choice of executing state requests on the task thread.)
 *
 * <p>Threading: proxies are called from worker threads (and may be from the container thread);
 * letters run on the container thread.
 */
@Internal
public final class OwnerCalls {
  /** Letters {@link #post}ed and not yet run above which a worker waits for its next one. */
  static final int MAX_POSTED = 1024;

  private final ProcessElementWorkers workers;
  /** Letters posted by workers and not yet run; any thread. */
  private final AtomicInteger posted = new AtomicInteger();

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
      if (method.getReturnType() == void.class) {
        post(target, method, args); // a write, add, clear, put, remove: nothing to wait for
        return null;
      }
      if (method.getName().equals("readLater") && method.getParameterCount() == 0) {
        return proxy; // a hint a prefetching state layer may use; the object cache has nothing to prefetch
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
    return ask(() -> {
      try {
        return invoke(target, method, args);
      } catch (Throwable t) {
        sneakyThrow(t);
        return null;
      }
    });
  }

  /** Whether the calling thread is the container thread (a call there runs directly). */
  public boolean onContainerThread() {
    return workers.onLoopThread();
  }

  /**
   * Runs {@code method} on the owner without waiting for it (directly if this is the owner): a
   * letter behind this thread's earlier ones, so a later call of the same worker sees its effect.
   */
  private void post(Supplier<?> target, Method method, Object[] args) {
    post(() -> {
      try {
        method.invoke(target.get(), args);
      } catch (InvocationTargetException e) {
        sneakyThrow(e.getCause());
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /**
   * Runs {@code action} on the container thread without waiting for it (directly if this is the
   * container thread). Letters of one worker run in the order it posted them, before any letter it
   * posts later (its next {@link #ask}, its call's completion), so nothing it does afterwards can
   * miss the effect. An exception {@code action} throws on the container thread fails the job
   * with that exception (the worker has moved on and cannot be told). A worker with more than
   * {@value #MAX_POSTED} letters not yet run waits for this one, so a DoFn that writes in a loop
   * does not grow the mailbox without bound.
   *
   * <p>Threading: any thread.
   */
  public void post(Runnable action) {
    if (workers.onLoopThread()) {
      action.run();
      return;
    }
    if (posted.incrementAndGet() > MAX_POSTED) {
      ask(() -> {
        posted.decrementAndGet();
        action.run();
        return null;
      });
      return;
    }
    workers.toLoop(() -> {
      posted.decrementAndGet();
      action.run();
    });
  }

  /**
   * Runs {@code action} on the container thread and returns its result (directly if this is the
   * container thread): one mailbox round trip. An exception it throws is thrown here.
   *
   * <p>Threading: any thread; a worker waits, interruptibly.
   *
   * @throws IllegalStateException wrapping an {@link InterruptedException} if the worker was
   *     interrupted while waiting (the job is failing or cancelled)
   */
  public <T> T ask(Supplier<T> action) {
    if (workers.onLoopThread()) {
      return action.get();
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    workers.toLoop(() -> {
      try {
        result.complete(action.get());
      } catch (Throwable t) {
        result.completeExceptionally(t);
      }
    });
    try {
      return result.get();
    } catch (ExecutionException e) {
      sneakyThrow(e.getCause());
      throw new AssertionError("unreachable");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the container thread", e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> void sneakyThrow(Throwable t) throws E {
    throw (E) t;
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
