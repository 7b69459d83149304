package dev.weir.runner.translation;

import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.coders.BigDecimalCoder;
import org.apache.beam.sdk.coders.BigEndianIntegerCoder;
import org.apache.beam.sdk.coders.BigEndianLongCoder;
import org.apache.beam.sdk.coders.BigEndianShortCoder;
import org.apache.beam.sdk.coders.BigIntegerCoder;
import org.apache.beam.sdk.coders.BitSetCoder;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.ByteCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CollectionCoder;
import org.apache.beam.sdk.coders.DequeCoder;
import org.apache.beam.sdk.coders.DoubleCoder;
import org.apache.beam.sdk.coders.DurationCoder;
import org.apache.beam.sdk.coders.FloatCoder;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.coders.IterableCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.LengthPrefixCoder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.MapCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.SetCoder;
import org.apache.beam.sdk.coders.SortedMapCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.StructuredCoder;
import org.apache.beam.sdk.coders.TextualIntegerCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.coders.VoidCoder;
import org.apache.beam.sdk.schemas.SchemaCoder;
import org.apache.beam.sdk.transforms.join.CoGbkResult;
import org.apache.beam.sdk.transforms.join.UnionCoder;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.ValueInSingleWindow;
import org.apache.beam.sdk.values.WindowedValues;

/**
 * When an element must go through its coder between its producer and its consumers: decided once
 * per PCollection at translation ({@link TranslationContext#registerOutputs}); the executor wraps
 * that PCollection's consumers in one encode/decode step ({@code executor.CoderRoundTrip}) or
 * passes its elements on by reference, with no per-element decision.
 *
 * <p>The rule. Elements are passed by reference (the consumer sees the very object produced)
 * unless the PCollection's coder may make what a consumer sees differ from what was produced;
 * those PCollections round-trip every element (encode with the coder, decode, hand the copy on),
 * which is what a runner that serializes between workers would do anyway:
 * <ul>
 *   <li>by reference: coders <em>known to carry every field</em> of their values and to decode to
 *       an equal value: Beam's value coders of strings, numbers, booleans, bytes, instants,
 *       durations and windows; structural coders (KV, iterable, list, set, map, nullable,
 *       length-prefix, timestamped value, value in a window, windowed value, {@code CoGroupByKey}'s
 *       result and union) whose components are all known (PAssert's reified values of a 100 MB
 *       key must not be copied: GroupByKeyTest's large keys); Beam's Nexmark coders (each model
 *       coder encodes every field of its immutable model class, and {@code NexmarkUtils}'
 *       {@code CastingCoder}, which every query's results go through as {@code KnownSize}, only
 *       delegates to a model coder: trusting the model package alone made every Nexmark result
 *       round-trip, Q0 at 1,000,000 events 0.67x); and runners' own coders ({@code org.apache.beam.runners},
 *       e.g. runners-core's keyed work items), whose values are built by runner code;
 *   <li>round trip: everything else: a {@link SchemaCoder} of {@code Row}s (its schema renames and
 *       reorders the fields of a {@code Row} built under another schema: Beam's {@code Select},
 *       {@code CoGroup}, {@code Join} and Beam SQL's aliases rely on the output coder's schema; a
 *       schema coder of a user type passes by reference: it maps the object to a Row of the type's
 *       own schema and back, which shows the consumer an equal object — Nexmark's model classes
 *       carry schemas, and round-tripping them made Q0 at 1,000,000 events 0.67x; fields a schema
 *       ignores are the one difference, and {@code --weirEnforceEncodability} shows them), coders that drop
 *       fields (e.g. {@code MatchResult.Metadata}'s drops {@code lastModifiedMillis}, although it
 *       declares {@code consistentWithEquals()}, so that declaration is not trusted), and user
 *       coders (they may fail to encode or lose state; the job then fails with the coder's
 *       exception as its cause).
 * </ul>
 * With {@code --weirEnforceEncodability} every PCollection except the runner's internal ones
 * round-trips, as in Beam's Direct runner (its {@code enforceEncodability}); Beam's Flink runner
 * similarly copies through the coder between chained operators unless object reuse is enabled.
 *
 * <p>Threading: static and stateless; called on the translating thread.
 */
final class EncodingRule {
  /** Coders of one value each that encode it whole and decode an equal value. */
  private static final Set<Class<?>> VALUE_CODERS = Set.of(StringUtf8Coder.class, VarLongCoder.class,
      VarIntCoder.class, BigEndianLongCoder.class, BigEndianIntegerCoder.class, BigEndianShortCoder.class,
      ByteCoder.class, BooleanCoder.class, DoubleCoder.class, FloatCoder.class, ByteArrayCoder.class,
      VoidCoder.class, InstantCoder.class, DurationCoder.class, BigDecimalCoder.class, BigIntegerCoder.class,
      TextualIntegerCoder.class, BitSetCoder.class, GlobalWindow.Coder.class,
      IntervalWindow.IntervalWindowCoder.class);
  /** Coders that are faithful exactly when all their component coders are. */
  private static final Set<Class<?>> STRUCTURAL_CODERS = Set.of(KvCoder.class, IterableCoder.class,
      ListCoder.class, SetCoder.class, MapCoder.class, SortedMapCoder.class, NullableCoder.class,
      CollectionCoder.class, DequeCoder.class, LengthPrefixCoder.class,
      TimestampedValue.TimestampedValueCoder.class, CoGbkResult.CoGbkResultCoder.class, UnionCoder.class,
      ValueInSingleWindow.Coder.class, WindowedValues.FullWindowedValueCoder.class,
      WindowedValues.ValueOnlyWindowedValueCoder.class, WindowedValues.ParamWindowedValueCoder.class);
  /** Packages of coders whose values the runner builds itself, or whose models are known whole. */
  private static final List<String> TRUSTED_PACKAGES = List.of("org.apache.beam.runners.",
      "org.apache.beam.sdk.nexmark.");

  private EncodingRule() {}

  /**
   * The coder {@code pc}'s elements must round-trip through, or null to pass them by reference.
   *
   * @param enforceEncodability {@code --weirEnforceEncodability}: every non-internal PCollection
   */
  static Coder<?> roundTripCoder(PCollection<?> pc, boolean enforceEncodability) {
    Coder<?> coder;
    try {
      coder = pc.getCoder();
    } catch (IllegalStateException e) {
      return null; // no coder set or inferable: nothing to round-trip through
    }
    if (coder == null || internal(coder)) {
      return null;
    }
    return enforceEncodability || !faithful(coder) ? coder : null;
  }

  /** Whether passing {@code coder}'s values by reference shows consumers what a round trip would. */
  static boolean faithful(Coder<?> coder) {
    if (coder instanceof SchemaCoder<?> schemaCoder) {
      // Only Rows: a Row built under another schema is relabelled by this coder's schema. A schema
      // coder of a user type (a POJO, bean or AutoValue through a schema provider) converts the
      // object to a Row of its own schema and back: the consumer would see an equal object.
      return !Row.class.isAssignableFrom(schemaCoder.getEncodedTypeDescriptor().getRawType());
    }
    Class<?> type = coder.getClass();
    if (VALUE_CODERS.contains(type) || trusted(type)) {
      return true;
    }
    if (STRUCTURAL_CODERS.contains(type)) {
      List<? extends Coder<?>> components = coder instanceof StructuredCoder<?> structured
          ? structured.getComponents() : coder.getCoderArguments();
      for (Coder<?> component : components) {
        if (!faithful(component)) {
          return false;
        }
      }
      return true;
    }
    // Not Coder#consistentWithEquals(): MatchResult.Metadata's coder declares it and still drops
    // lastModifiedMillis (FileIOTest#testMatchAndMatchAll); only the lists above are trusted.
    return false;
  }

  private static boolean internal(Coder<?> coder) {
    String name = coder.getClass().getName();
    return name.startsWith("org.apache.beam.runners.");
  }

  private static boolean trusted(Class<?> type) {
    String name = type.getName();
    for (String prefix : TRUSTED_PACKAGES) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }
}
