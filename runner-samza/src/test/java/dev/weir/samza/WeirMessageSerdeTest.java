package dev.weir.samza;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.runner.stream.ProducerEndOfStream;
import dev.weir.runner.stream.ProducerWatermark;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.joda.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link WeirMessageSerde}: round trips of elements and control messages, and corrupt input. */
class WeirMessageSerdeTest {
  private static final WeirMessageSerde SERDE = new WeirMessageSerde("s0-shuffle-GroupByKey",
      WindowedValues.getFullCoder(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()), IntervalWindow.getCoder()));

  @Test
  void element_roundTripsWithTimestampWindowsAndPane() {
    IntervalWindow window = new IntervalWindow(new Instant(1_000), new Instant(2_000));
    WindowedValue<KV<String, Long>> element = WindowedValues.of(KV.of("k", 42L), new Instant(1_500), List.of(window),
        PaneInfo.createPane(false, true, PaneInfo.Timing.ON_TIME, 3, 0));
    byte[] bytes = SERDE.toBytes(element);
    assertThat(bytes[0]).isEqualTo(WeirMessageSerde.ELEMENT);
    WindowedValue<?> decoded = (WindowedValue<?>) SERDE.fromBytes(bytes);
    assertThat(decoded.getValue()).isEqualTo(KV.of("k", 42L));
    assertThat(decoded.getTimestamp()).isEqualTo(new Instant(1_500));
    assertThat(new java.util.ArrayList<Object>(decoded.getWindows())).containsExactly(window);
    assertThat(decoded.getPaneInfo()).isEqualTo(element.getPaneInfo());
  }

  @Test
  void sequencedElement_roundTripsWithProducerAndSequence() {
    IntervalWindow window = new IntervalWindow(new Instant(0), new Instant(10));
    WindowedValue<KV<String, Long>> element = WindowedValues.of(KV.of("k", 7L), new Instant(5), window,
        PaneInfo.NO_FIRING);
    byte[] bytes = SERDE.toBytes(new SequencedElement(4, 1L << 40, element));
    assertThat(bytes[0]).isEqualTo(WeirMessageSerde.SEQUENCED_ELEMENT);
    SequencedElement decoded = (SequencedElement) SERDE.fromBytes(bytes);
    assertThat(decoded.producer()).isEqualTo(4);
    assertThat(decoded.sequence()).isEqualTo(1L << 40);
    assertThat(decoded.element().getValue()).isEqualTo(KV.of("k", 7L));
    assertThat(decoded.element().getTimestamp()).isEqualTo(new Instant(5));
    assertThat(new java.util.ArrayList<Object>(decoded.element().getWindows())).containsExactly(window);
    // the same element bytes follow the 13-byte header as in an unnumbered element
    byte[] plain = SERDE.toBytes(element);
    assertThat(Arrays.copyOfRange(bytes, 13, bytes.length)).isEqualTo(Arrays.copyOfRange(plain, 1, plain.length));
  }

  @Test
  void unnumberedElement_ofTheOlderFormat_isReadAsAPlainWindowedValue() {
    // kind 0 is what Weir wrote before sequence numbers (and what non-numbering tasks write): a
    // consumer takes it as it is, never as a replay
    WindowedValue<KV<String, Long>> element = WindowedValues.of(KV.of("old", 1L), new Instant(5),
        new IntervalWindow(new Instant(0), new Instant(10)), PaneInfo.NO_FIRING);
    byte[] bytes = SERDE.toBytes(element);
    assertThat(bytes[0]).isEqualTo(WeirMessageSerde.ELEMENT);
    assertThat(SERDE.fromBytes(bytes)).isInstanceOf(WindowedValue.class);
  }

  @Test
  void sequencedElement_withANegativeProducerOrASequenceBelowOne_isCorrupt() {
    WindowedValue<KV<String, Long>> element = WindowedValues.of(KV.of("k", 7L), new Instant(5),
        new IntervalWindow(new Instant(0), new Instant(10)), PaneInfo.NO_FIRING);
    byte[] bytes = SERDE.toBytes(new SequencedElement(0, 1, element));
    byte[] zeroSequence = bytes.clone();
    zeroSequence[12] = 0; // sequence 1 -> 0
    assertThatThrownBy(() -> SERDE.fromBytes(zeroSequence))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("its producer is 0 and its sequence 0 (allowed: producer >= 0, sequence >= 1)");
    assertThatThrownBy(() -> SERDE.fromBytes(Arrays.copyOf(bytes, 9)))
        .hasMessageContaining("it is truncated");
    assertThatThrownBy(() -> new SequencedElement(-1, 1, element)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void watermark_roundTripsWithProducerAndTaskName() {
    ProducerWatermark decoded =
        (ProducerWatermark) SERDE.fromBytes(SERDE.toBytes(new ProducerWatermark(-5L, 3, "stage-1-p3")));
    assertThat(decoded.getTimestamp()).isEqualTo(-5L);
    assertThat(decoded.producer()).isEqualTo(3);
    assertThat(decoded.getTaskName()).isEqualTo("stage-1-p3");
    ProducerWatermark max = (ProducerWatermark) SERDE.fromBytes(SERDE.toBytes(
        new ProducerWatermark(Long.MAX_VALUE, 0, "stage-0-p0")));
    assertThat(max.getTimestamp()).isEqualTo(Long.MAX_VALUE);
    assertThat(decoded.drained()).isFalse();
  }

  @Test
  void aWatermarkTheDrainMoved_keepsItsCause() {
    byte[] bytes = SERDE.toBytes(new ProducerWatermark(Long.MAX_VALUE, 2, "stage-0-p2", true));
    assertThat(bytes[0]).isEqualTo(WeirMessageSerde.DRAINED_WATERMARK);
    ProducerWatermark decoded = (ProducerWatermark) SERDE.fromBytes(bytes);
    assertThat(decoded.drained()).isTrue();
    assertThat(decoded.getTimestamp()).isEqualTo(Long.MAX_VALUE);
    assertThat(decoded.producer()).isEqualTo(2);
    assertThat(decoded.getTaskName()).isEqualTo("stage-0-p2");
  }

  @Test
  void endOfStream_roundTripsWithProducerAndTaskName() {
    ProducerEndOfStream decoded =
        (ProducerEndOfStream) SERDE.fromBytes(SERDE.toBytes(new ProducerEndOfStream(7, "stage-2-p7")));
    assertThat(decoded.producer()).isEqualTo(7);
    assertThat(decoded.getTaskName()).isEqualTo("stage-2-p7");
  }

  @Test
  void theSerdeItselfSurvivesJavaSerialization_asSamzaDescriptorsStoreIt() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(SERDE);
    }
    WeirMessageSerde copy;
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = (WeirMessageSerde) in.readObject();
    }
    WindowedValue<KV<String, Long>> element = WindowedValues.of(KV.of("a", 1L), new Instant(5),
        new IntervalWindow(new Instant(0), new Instant(10)), PaneInfo.NO_FIRING);
    assertThat(((WindowedValue<?>) copy.fromBytes(SERDE.toBytes(element))).getValue()).isEqualTo(KV.of("a", 1L));
  }

  @Test
  void unknownKind_namesTheStreamAndTheAllowedKinds() {
    assertThatThrownBy(() -> SERDE.fromBytes(new byte[] {9, 1, 2}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("corrupt message on Weir stream s0-shuffle-GroupByKey: its kind byte is 9 (allowed: 0 element, "
            + "1 watermark, 2 end of stream, 3 sequenced element, 4 drained watermark); length 3 bytes");
  }

  @Test
  void truncatedOrEmptyOrTrailingBytes_areCorrupt() {
    byte[] watermark = SERDE.toBytes(new ProducerWatermark(10L, 1, "stage-0-p1"));
    assertThatThrownBy(() -> SERDE.fromBytes(Arrays.copyOf(watermark, 6)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("corrupt message on Weir stream s0-shuffle-GroupByKey: it is truncated");
    assertThatThrownBy(() -> SERDE.fromBytes(new byte[0]))
        .hasMessageContaining("it is empty");
    byte[] longer = Arrays.copyOf(watermark, watermark.length + 2);
    assertThatThrownBy(() -> SERDE.fromBytes(longer))
        .hasMessageContaining("2 byte(s) are left after the message");
  }

  @Test
  void elementTheCoderCannotDecode_namesTheStream() {
    assertThatThrownBy(() -> SERDE.fromBytes(new byte[] {WeirMessageSerde.ELEMENT, (byte) 0xff}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("cannot decode an element of stream s0-shuffle-GroupByKey");
  }

  @Test
  void elementTheCoderCannotEncode_namesTheStream() {
    assertThatThrownBy(() -> SERDE.toBytes(WindowedValues.valueInGlobalWindow(KV.of("a", 1L))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("cannot encode an element of stream s0-shuffle-GroupByKey");
  }

  @Test
  void otherMessages_areRejected() {
    assertThatThrownBy(() -> SERDE.toBytes("text"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not java.lang.String");
  }
}
