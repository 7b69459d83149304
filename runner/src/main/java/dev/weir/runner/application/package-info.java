/**
 * The samza-api face of a translated job: the job as a Samza {@code TaskApplication}, for hosts
 * that speak samza-api. Nothing below this package refers to it.
 */
package dev.weir.runner.application;
