// Role: parses the --queries option ("0-14", "0,3,5-7") into an ordered list of query numbers.
// Threading: stateless; safe from any thread.
package dev.weir.nexmark.driver;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Nexmark query numbers in Beam's numbering (13 = BOUNDED_SIDE_INPUT_JOIN, 14 =
 * SESSION_SIDE_INPUT_JOIN, 15 = PORTABILITY_BATCH, 16 = RESHUFFLE).
 */
public final class QuerySet {
  /** Highest query number Beam's Nexmark launcher knows. */
  public static final int MAX_QUERY = 16;

  private static final String[] NAMES = {
    "PASSTHROUGH", "CURRENCY_CONVERSION", "SELECTION", "LOCAL_ITEM_SUGGESTION",
    "AVERAGE_PRICE_FOR_CATEGORY", "HOT_ITEMS", "AVERAGE_SELLING_PRICE_BY_SELLER", "HIGHEST_BID",
    "MONITOR_NEW_USERS", "WINNING_BIDS", "LOG_TO_SHARDED_FILES", "USER_SESSIONS",
    "PROCESSING_TIME_WINDOWS", "BOUNDED_SIDE_INPUT_JOIN", "SESSION_SIDE_INPUT_JOIN",
    "PORTABILITY_BATCH", "RESHUFFLE"
  };

  private QuerySet() {}

  /**
   * Parses a comma-separated list of numbers and inclusive ranges, keeping first-seen order and
   * dropping duplicates.
   *
   * @throws IllegalArgumentException on syntax errors, reversed ranges or numbers outside 0-16
   */
  public static List<Integer> parse(String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException("empty query list");
    }
    Set<Integer> out = new LinkedHashSet<>();
    for (String raw : spec.split(",")) {
      String part = raw.trim();
      if (part.isEmpty()) {
        throw new IllegalArgumentException("empty element in query list '" + spec + "'");
      }
      int dash = part.indexOf('-', 1);
      if (dash > 0) {
        int lo = number(part.substring(0, dash), spec);
        int hi = number(part.substring(dash + 1), spec);
        if (lo > hi) {
          throw new IllegalArgumentException("reversed range '" + part + "' in '" + spec + "'");
        }
        for (int q = lo; q <= hi; q++) {
          out.add(q);
        }
      } else {
        out.add(number(part, spec));
      }
    }
    return new ArrayList<>(out);
  }

  /** Beam's NexmarkQueryName for a query number, e.g. 13 -> BOUNDED_SIDE_INPUT_JOIN. */
  public static String name(int query) {
    return query >= 0 && query < NAMES.length ? NAMES[query] : "Q" + query;
  }

  private static int number(String s, String spec) {
    int q;
    try {
      q = Integer.parseInt(s.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a query number: '" + s.trim() + "' in '" + spec + "'");
    }
    if (q < 0 || q > MAX_QUERY) {
      throw new IllegalArgumentException("query " + q + " outside 0-" + MAX_QUERY);
    }
    return q;
  }
}
