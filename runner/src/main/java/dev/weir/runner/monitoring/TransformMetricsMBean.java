package dev.weir.runner.monitoring;

import dev.weir.runner.metrics.StepMetrics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.GaugeResult;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.StringSetResult;

/**
 * One PTransform as a JMX dynamic MBean: its elements in and out ({@code ElementsIn},
 * {@code ElementsOut}: summed over its tasks, see {@link dev.weir.runner.metrics.ElementCounter};
 * every transform has both, as Flink shows records in and out per operator), then its Beam user
 * metrics, one read-only attribute per metric, named {@code <namespace>:<name>}, with the metric's <em>attempted</em> value (every
 * update so far, as {@code PipelineResult.metrics()} reports it). A counter is a {@code Long}; a
 * gauge its latest {@code Long}; a distribution four attributes ({@code .count}, {@code .sum},
 * {@code .min}, {@code .max}, each a {@code Long}); a string set its sorted values joined by
 * {@code ", "}. Metrics appear as the job first updates them, so the attribute set grows
 * ({@link #getMBeanInfo()} is computed on each call; jconsole shows new ones on refresh).
 *
 * <p>Cost: each read merges the job's metrics ({@link StepMetrics#results()}: O(tasks x metrics),
 * off the run loop); nothing is added to the hot path.
 *
 * <p>Threading: any thread (JMX's).
 */
final class TransformMetricsMBean implements DynamicMBean {
  static final String ELEMENTS_IN = "ElementsIn";
  static final String ELEMENTS_OUT = "ElementsOut";
  private final StepMetrics metrics;
  private final String stepName;

  TransformMetricsMBean(StepMetrics metrics, String stepName) {
    this.metrics = metrics;
    this.stepName = stepName;
  }

  /** The transform's metrics now, by attribute name, in a stable order. */
  Map<String, Object> values() {
    Map<String, Object> values = new LinkedHashMap<>();
    StepMetrics.ElementCount elements = metrics.elementCounts().get(stepName);
    values.put(ELEMENTS_IN, elements == null ? 0L : elements.in());
    values.put(ELEMENTS_OUT, elements == null ? 0L : elements.out());
    MetricQueryResults all = metrics.results().allMetrics();
    for (MetricResult<Long> counter : all.getCounters()) {
      if (stepName.equals(counter.getKey().stepName())) {
        values.put(counter.getName().toString(), counter.getAttempted());
      }
    }
    for (MetricResult<DistributionResult> d : all.getDistributions()) {
      if (stepName.equals(d.getKey().stepName())) {
        String name = d.getName().toString();
        DistributionResult value = d.getAttempted();
        values.put(name + ".count", value.getCount());
        values.put(name + ".sum", value.getSum());
        values.put(name + ".min", value.getMin());
        values.put(name + ".max", value.getMax());
      }
    }
    for (MetricResult<GaugeResult> gauge : all.getGauges()) {
      if (stepName.equals(gauge.getKey().stepName())) {
        values.put(gauge.getName().toString(), gauge.getAttempted().getValue());
      }
    }
    for (MetricResult<StringSetResult> set : all.getStringSets()) {
      if (stepName.equals(set.getKey().stepName())) {
        values.put(set.getName().toString(), String.join(", ", new TreeSet<>(set.getAttempted().getStringSet())));
      }
    }
    return values;
  }

  @Override
  public Object getAttribute(String attribute) throws AttributeNotFoundException {
    Object value = values().get(attribute);
    if (value == null) {
      throw new AttributeNotFoundException("PTransform '" + stepName + "' has no metric " + attribute
          + " (yet); its metrics: " + values().keySet());
    }
    return value;
  }

  @Override
  public AttributeList getAttributes(String[] attributes) {
    Map<String, Object> values = values();
    AttributeList list = new AttributeList();
    for (String name : attributes) {
      Object value = values.get(name);
      if (value != null) {
        list.add(new Attribute(name, value));
      }
    }
    return list;
  }

  @Override
  public void setAttribute(Attribute attribute) {
    throw new UnsupportedOperationException("Weir's metrics MBeans are read-only");
  }

  @Override
  public AttributeList setAttributes(AttributeList attributes) {
    return new AttributeList(); // read-only: nothing set
  }

  @Override
  public Object invoke(String actionName, Object[] params, String[] signature) {
    throw new UnsupportedOperationException("Weir's metrics MBeans have no operations");
  }

  @Override
  public MBeanInfo getMBeanInfo() {
    List<MBeanAttributeInfo> attributes = new ArrayList<>();
    for (Map.Entry<String, Object> e : values().entrySet()) {
      String description = switch (e.getKey()) {
        case ELEMENTS_IN -> "Elements into " + stepName + " so far, over its tasks";
        case ELEMENTS_OUT -> "Elements " + stepName + " emitted to its consumers so far, over its tasks";
        default -> "Beam metric " + e.getKey() + " of " + stepName + " (attempted)";
      };
      attributes.add(new MBeanAttributeInfo(e.getKey(), e.getValue().getClass().getName(), description,
          true, false, false));
    }
    return new MBeanInfo(getClass().getName(), "Elements in and out and Beam user metrics of the PTransform '"
        + stepName + "'",
        attributes.toArray(new MBeanAttributeInfo[0]), null, null, null);
  }
}
