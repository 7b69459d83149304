package dev.weir.dashboards;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders results as InfluxDB line protocol in Beam's Nexmark naming, so that Beam's Grafana
 * dashboards (and {@code grafana-dashboard.json} here) work with few edits: one point per ok run,
 * measurement {@code nexmark_<query>_<mode>}, tag {@code runner}, fields {@code eventsPerSec},
 * {@code runtimeSec} and {@code numResults} (an integer, suffix {@code i}), timestamp the suite's
 * start in ns. Stateless; safe from any thread.
 *
 * <p>Source of the naming: Beam's {@code NexmarkUtils}/{@code Main} InfluxDB export
 * ({@code <baseMeasurement>_<query>_<batch|streaming>}).
 */
public final class InfluxExport {
  private InfluxExport() {}

  /** One line per ok run of every file (sweep runs carry their values as extra tags). */
  public static List<String> lines(List<ResultsFile> files) {
    List<String> out = new ArrayList<>();
    for (ResultsFile f : files) {
      long ns = startNanos(f);
      for (RunResult r : f.runs()) {
        if (!r.ok()) {
          continue;
        }
        StringBuilder line = new StringBuilder("nexmark_").append(r.query()).append('_').append(r.mode());
        line.append(",runner=").append(escapeTag(r.runner()));
        r.sweep().forEach((k, v) -> line.append(',').append(escapeTag(k)).append('=').append(escapeTag(v)));
        line.append(' ').append("eventsPerSec=").append(String.format(Locale.ROOT, "%.3f", r.eventsPerSec()));
        if (r.runtimeSec() != null) {
          line.append(",runtimeSec=").append(String.format(Locale.ROOT, "%.3f", r.runtimeSec()));
        }
        if (r.numResults() != null) {
          line.append(",numResults=").append(r.numResults()).append('i');
        }
        line.append(' ').append(ns);
        out.add(line.toString());
      }
    }
    return out;
  }

  private static long startNanos(ResultsFile f) {
    if (f.startedAt() != null) {
      try {
        Instant t = Instant.parse(f.startedAt());
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
      } catch (DateTimeParseException ignored) {
        // fall through: a file without a parseable start time is stamped now
      }
    }
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** Escapes a tag key or value: commas, equals signs and spaces take a backslash. */
  static String escapeTag(String s) {
    return s == null ? "null" : s.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ");
  }
}
