/**
 * Beam {@code StateInternals} over state-cache: {@link dev.weir.runner.state.CachedStateInternals}
 * and one file per state kind (value, bag, combining, map, set, multimap, ordered list, watermark
 * hold), every on-disk key in {@link dev.weir.runner.state.CellLayout} (format version byte, golden
 * bytes in its test), and {@link dev.weir.runner.state.ContainerState}, a container's storage and
 * object cache.
 *
 * <p>Threading: the owning container's thread (the object cache's single-owner rule).
 */
package dev.weir.runner.state;
