/**
 * A running job's live metrics, off the run loop: {@link dev.weir.runner.monitoring.JobMonitoring}
 * registers the job's JMX MBeans ({@link dev.weir.runner.monitoring.WeirMXBeans} names them) and
 * writes the periodic metrics log. It reads containers only through
 * {@link dev.weir.runner.monitoring.ContainerStatus}, read-only views of counters the loops keep
 * anyway, so that a read never blocks or slows a run loop.
 *
 * <p>Threading: any thread.
 */
package dev.weir.runner.monitoring;
