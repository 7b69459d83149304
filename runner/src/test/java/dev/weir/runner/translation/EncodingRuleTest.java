// Role: unit tests of the encoding rule: which coders pass elements by reference.
// Threading: single-threaded JUnit tests.
package dev.weir.runner.translation;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.schemas.JavaFieldSchema;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.SchemaCoder;
import org.apache.beam.sdk.schemas.SchemaRegistry;
import org.apache.beam.sdk.schemas.annotations.DefaultSchema;
import org.apache.beam.sdk.values.TimestampedValue;
import org.junit.jupiter.api.Test;

class EncodingRuleTest {
  /** A user type with a schema, as Nexmark's model classes have. */
  @DefaultSchema(JavaFieldSchema.class)
  public static class Point implements java.io.Serializable {
    public long x;
    public String label;
  }

  @Test
  void schemaCodersOfRowsRoundTripButSchemaCodersOfUserTypesPassByReference() throws Exception {
    Schema schema = Schema.builder().addInt64Field("x").addStringField("label").build();
    assertThat(EncodingRule.faithful(SchemaCoder.of(schema))).as("Row: the schema may relabel").isFalse();
    SchemaCoder<Point> pointCoder = SchemaRegistry.createDefault().getSchemaCoder(Point.class);
    assertThat(EncodingRule.faithful(pointCoder)).as("a POJO maps to a Row of its own schema and back").isTrue();
    assertThat(EncodingRule.faithful(TimestampedValue.TimestampedValueCoder.of(pointCoder))).isTrue();
  }

  @Test
  void knownValueAndStructuralCodersPassByReferenceAndUserCodersRoundTrip() {
    assertThat(EncodingRule.faithful(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()))).isTrue();
    assertThat(EncodingRule.faithful(SerializableCoder.of(Point.class))).isFalse();
    assertThat(EncodingRule.faithful(KvCoder.of(StringUtf8Coder.of(), SerializableCoder.of(Point.class)))).isFalse();
  }
}
