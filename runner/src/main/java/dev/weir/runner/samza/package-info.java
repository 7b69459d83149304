/**
 * Samza systems over a translated job's sources and in-process streams (system factories, admins,
 * consumers), used by the samza-api face and by {@code weir-runner-samza}. Nothing below this
 * package refers to it.
 */
package dev.weir.runner.samza;
