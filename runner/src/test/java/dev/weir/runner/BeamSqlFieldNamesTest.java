package dev.weir.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.extensions.sql.SqlTransform;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Beam SQL on Weir: a query whose output names its fields (aliases, a {@code ROW(...)}
 * constructor) returns rows carrying those names, not Calcite's internal ones ({@code EXPR$0}):
 * the renaming lives only in the output {@code SchemaCoder}, so the rows must go through it
 * (issue 17, the encoding rule). Batch and streaming. Note: these two queries also pass with every
 * element passed by reference; they guard the rule, they do not reproduce the query
 * (ORDER BY a column not selected keeps that column in the rows on Beam's Direct runner too).
 */
class BeamSqlFieldNamesTest {
  private static final Schema ORDERS = Schema.builder()
      .addInt64Field("id").addStringField("customer").addInt64Field("amount").build();

  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void aliasesAndRowConstructorNameTheOutputFields(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    PCollection<Row> orders = p.apply(Create.of(
            Row.withSchema(ORDERS).addValues(1L, "ann", 10L).build(),
            Row.withSchema(ORDERS).addValues(2L, "bob", 20L).build()))
        .setRowSchema(ORDERS);
    PCollection<Row> out = orders.apply(SqlTransform.query(
        "SELECT id AS order_id, amount * 2 AS doubled, ROW(customer, amount) AS detail FROM PCOLLECTION"));
    PCollection<String> described = out.apply(MapElements.into(TypeDescriptors.strings()).via(BeamSqlFieldNamesTest::describe));
    PAssert.that(described).containsInAnyOrder(
        "order_id,doubled,detail=1,20", "order_id,doubled,detail=2,40");
    PAssert.that(out).satisfies(new NestedNames());
    p.run().waitUntilFinish();
  }

  /** ORDER BY ... LIMIT (a top-n combine) with aliases and a ROW(...) constructor. */
  @ParameterizedTest(name = "streaming={0}")
  @ValueSource(booleans = {false, true})
  void orderByLimitKeepsTheAliases(boolean streaming) {
    Pipeline p = Pipeline.create(Pipelines.options(streaming));
    PCollection<Row> orders = p.apply(Create.of(
            Row.withSchema(ORDERS).addValues(1L, "ann", 10L).build(),
            Row.withSchema(ORDERS).addValues(2L, "bob", 20L).build(),
            Row.withSchema(ORDERS).addValues(3L, "cid", 30L).build()))
        .setRowSchema(ORDERS);
    PCollection<Row> out = orders.apply(SqlTransform.query(
        "SELECT id AS order_id, amount * 2 AS doubled, ROW(customer, amount) AS detail FROM PCOLLECTION "
            + "ORDER BY order_id DESC LIMIT 2"));
    PCollection<String> described = out.apply(MapElements.into(TypeDescriptors.strings()).via(BeamSqlFieldNamesTest::describe));
    PAssert.that(described).containsInAnyOrder(
        "order_id,doubled,detail=3,60", "order_id,doubled,detail=2,40");
    PAssert.that(out).satisfies(new NestedNames());
    p.run().waitUntilFinish();
  }

  private static String describe(Row r) {
    return String.join(",", r.getSchema().getFieldNames()) + "=" + r.getInt64("order_id") + "," + r.getInt64("doubled");
  }

  /** The ROW(...) field is a row with two fields; its rows carry the schema the output declares. */
  static final class NestedNames implements SerializableFunction<Iterable<Row>, Void> {
    @Override
    public Void apply(Iterable<Row> rows) {
      for (Row r : rows) {
        Row detail = r.getRow("detail");
        assertThat(detail).isNotNull();
        assertThat(detail.getSchema()).isEqualTo(r.getSchema().getField("detail").getType().getRowSchema());
        assertThat(detail.getSchema().getFieldCount()).isEqualTo(2);
        assertThat(List.of(r.getSchema().getFieldNames().toArray())).containsExactly("order_id", "doubled", "detail");
      }
      return null;
    }
  }
}
