/**
 * The few calls into runners-core whose signatures differ between the Beam minors Weir supports.
 * Each supported minor has its own copy of this package, in {@code runner/src/beam-<minor>/java};
 * the build of that minor compiles exactly one copy next to the shared sources. The shared code
 * never names a version-specific type (such as 2.73's {@code CausedByDrain}): it passes a timer's
 * drain cause as a {@code boolean} and goes through these classes.
 *
 * <p>This copy is for Beam 2.70 (runners-core 2.70.0): {@code DoFnRunner.onTimer} has no drain
 * argument and {@code TimerData} carries no drain cause.
 */
package dev.weir.runner.compat;
