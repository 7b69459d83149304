/**
 * Keyed operators: {@link dev.weir.runner.operators.keyed.KeyedOperator} (key contexts, timers,
 * bounded-slice firing) and its kinds: GroupByKey (runners-core's {@code ReduceFnRunner}, kept per
 * key), stateful ParDo, splittable process, time-sorted input; per-key batches of a bundle and the
 * key contexts of an operator.
 *
 * <p>Threading: an operator is confined to its task's thread.
 */
package dev.weir.runner.operators.keyed;
