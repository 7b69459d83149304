/**
 * Processing time: the job's {@link dev.weir.runner.time.JobClock} (the system clock, or a test
 * stream's {@link dev.weir.runner.time.ManualJobClock}) and the test stream's
 * {@link dev.weir.runner.time.Quiescence} tracking, which lets a {@code TestStream} wait for the
 * job to settle before its next event.
 */
package dev.weir.runner.time;
