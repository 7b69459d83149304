/**
 * Operators: one class per kind of fused node ({@link dev.weir.runner.operators.Operator} states
 * the lifecycle and threading contract): ParDo, partial combine, window assignment,
 * {@code @RequiresStableInput}, pass-through; what DoFn operators share (the DoFn lifecycle, the
 * output router, side-input pushback, bundle finalizers) and the context an operator opens with.
 * Keyed operators are in {@link dev.weir.runner.operators.keyed}.
 *
 * <p>Threading: an operator is confined to its task's thread.
 */
package dev.weir.runner.operators;
