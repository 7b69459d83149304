package dev.weir.examples;

import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.TextIO;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.Validation;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TypeDescriptors;

/**
 * A side-input join: enriches each order with its customer's name, looked up in a map of all
 * customers that every worker holds in full (a side input). Orders whose customer is unknown
 * keep going, with the name {@code <unknown>}.
 *
 * <p>What it shows: {@code View.asMap()} built from one PCollection and read by a ParDo over
 * another ({@code sideInput(view)}), the usual join when one side is small. On Weir the view's
 * PCollection is broadcast to every task of the consuming stage, and main-input elements wait
 * until the view of their window is ready.
 *
 * <p>Input: {@code --customers}, lines {@code customerId,name}; {@code --orders}, lines
 * {@code orderId,customerId,amountCents}. Output ({@code --output}, one file): lines
 * {@code orderId,customerName,amountCents}, in no particular order.
 *
 * <p>Run it from the repository root (after {@code mvn -B install -DskipTests -pl examples -am}):
 * <pre>
 * mvn -pl examples exec:java -Dexec.mainClass=dev.weir.examples.OrdersWithCustomers \
 *   -Dexec.args="--runner=WeirRunner --customers=examples/src/test/resources/customers.csv --orders=examples/src/test/resources/orders.csv --output=/tmp/weir-orders/enriched.csv"
 * </pre>
 */
public final class OrdersWithCustomers {
  private OrdersWithCustomers() {}

  /** The name given to orders whose customer id is not in the customer map. */
  public static final String UNKNOWN = "<unknown>";

  /** The example's options. */
  public interface Options extends PipelineOptions {
    @Description("Customers file: lines 'customerId,name'.")
    @Validation.Required
    String getCustomers();

    void setCustomers(String customers);

    @Description("Orders file: lines 'orderId,customerId,amountCents'.")
    @Validation.Required
    String getOrders();

    void setOrders(String orders);

    @Description("Output file: lines 'orderId,customerName,amountCents'.")
    @Validation.Required
    String getOutput();

    void setOutput(String output);
  }

  /**
   * Order lines in, enriched lines out; the customer lines arrive through the constructor, as a
   * PCollection of the same pipeline, and become the side input.
   */
  public static final class JoinWithCustomers extends PTransform<PCollection<String>, PCollection<String>> {
    private final PCollection<String> customerLines;

    /** @param customerLines lines {@code customerId,name} of the same pipeline; ids are unique */
    public JoinWithCustomers(PCollection<String> customerLines) {
      this.customerLines = customerLines;
    }

    @Override
    public PCollection<String> expand(PCollection<String> orderLines) {
      PCollectionView<Map<String, String>> customersById = customerLines
          .apply("ParseCustomers", MapElements
              .into(TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings()))
              .via((String line) -> {
                String[] f = line.split(",", 2);
                return KV.of(f[0].trim(), f[1].trim());
              }))
          .apply("AsMap", View.asMap());
      return orderLines.apply("Enrich", ParDo.of(new EnrichFn(customersById)).withSideInputs(customersById));
    }
  }

  /** Looks each order's customer up in the side input. */
  static final class EnrichFn extends DoFn<String, String> {
    private final PCollectionView<Map<String, String>> customersById;

    EnrichFn(PCollectionView<Map<String, String>> customersById) {
      this.customersById = customersById;
    }

    @ProcessElement
    public void processElement(ProcessContext c) {
      String[] f = c.element().split(",");
      // The side input's value for this element's window (here the global window): the whole map.
      String name = c.sideInput(customersById).getOrDefault(f[1].trim(), UNKNOWN);
      c.output(f[0].trim() + "," + name + "," + f[2].trim());
    }
  }

  /** Builds the whole pipeline, files in and file out, on {@code options}. */
  public static Pipeline build(Options options) {
    Pipeline pipeline = Pipeline.create(options);
    PCollection<String> customers = pipeline.apply("ReadCustomers", TextIO.read().from(options.getCustomers()));
    pipeline
        .apply("ReadOrders", TextIO.read().from(options.getOrders()))
        .apply("JoinWithCustomers", new JoinWithCustomers(customers))
        .apply("WriteOrders", TextIO.write().to(options.getOutput()).withoutSharding());
    return pipeline;
  }

  /** Parses the command line, runs the pipeline and waits until it has finished. */
  public static void main(String[] args) {
    Options options = PipelineOptionsFactory.fromArgs(args).withValidation().as(Options.class);
    build(options).run().waitUntilFinish();
  }
}
