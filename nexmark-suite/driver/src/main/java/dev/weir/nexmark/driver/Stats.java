// Role: the arithmetic behind the summary table: ratios of events/s, geometric means, medians.
// Threading: stateless; safe from any thread.
package dev.weir.nexmark.driver;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/** Ratio and mean helpers. Inputs are events per second; outputs are dimensionless ratios. */
public final class Stats {
  private Stats() {}

  /** {@code num / den}, or null when either is missing, not finite or not positive. */
  public static Double ratio(Double num, Double den) {
    if (!positive(num) || !positive(den)) {
      return null;
    }
    return num / den;
  }

  /** Geometric mean of the positive finite values, ignoring nulls; null when there are none. */
  public static Double geomean(Collection<Double> values) {
    double logSum = 0;
    int n = 0;
    for (Double v : values) {
      if (positive(v)) {
        logSum += Math.log(v);
        n++;
      }
    }
    return n == 0 ? null : Math.exp(logSum / n);
  }

  /** Median of the non-null values (mean of the middle two for an even count); null when empty. */
  public static Double median(Collection<Double> values) {
    List<Double> v = new ArrayList<>();
    for (Double d : values) {
      if (d != null && Double.isFinite(d)) {
        v.add(d);
      }
    }
    if (v.isEmpty()) {
      return null;
    }
    Collections.sort(v);
    int m = v.size() / 2;
    return v.size() % 2 == 1 ? v.get(m) : (v.get(m - 1) + v.get(m)) / 2;
  }

  private static boolean positive(Double d) {
    return d != null && Double.isFinite(d) && d > 0;
  }
}
