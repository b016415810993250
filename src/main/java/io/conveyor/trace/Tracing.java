package io.conveyor.trace;

import io.conveyor.config.Config;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.HashMap;
import java.util.Map;

/**
 * One trace per transaction. Its start is a span (under the client's traceparent when it sent one); the
 * start's context is kept with the transaction (stateH field trace) so each step attempt, on whichever node,
 * is a span under it, and a child pipeline's or branch's start hangs under the step that started it. The
 * context travels as a W3C traceparent: in event-bus step headers, webhook and http/request calls.
 * Off by default and then free: {@link #OFF} starts nothing, and no trace is stored.
 */
public final class Tracing {
  /** Span attributes Conveyor sets. */
  public static final AttributeKey<String> TX_ID = AttributeKey.stringKey("conveyor.tx_id");
  public static final AttributeKey<String> PIPELINE = AttributeKey.stringKey("conveyor.pipeline");
  public static final AttributeKey<String> OWNER = AttributeKey.stringKey("conveyor.owner");
  public static final AttributeKey<Long> STEP = AttributeKey.longKey("conveyor.step");
  public static final AttributeKey<String> STEP_TYPE = AttributeKey.stringKey("conveyor.step_type");
  public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("conveyor.step_attempt");
  public static final AttributeKey<String> NODE = AttributeKey.stringKey("conveyor.node");
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("conveyor.outcome");

  public static final Tracing OFF = new Tracing(null, null);
  private static final String HEADER = "traceparent";
  private static final TextMapGetter<String> ONE = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(String carrier) {
      return java.util.List.of(HEADER);
    }

    @Override
    public String get(String carrier, String key) {
      return HEADER.equals(key) ? carrier : null;
    }
  };

  private final Tracer tracer;
  private final OpenTelemetrySdk owned;

  private Tracing(Tracer tracer, OpenTelemetrySdk owned) {
    this.tracer = tracer;
    this.owned = owned;
  }

  /** Tracing into the given OpenTelemetry (tests pass an SDK with an in-memory exporter). */
  public static Tracing of(OpenTelemetry otel) {
    return new Tracing(otel.getTracer("io.conveyor"), null);
  }

  /**
   * From config: OFF unless tracing.enabled; then the SDK as the OTEL_* variables set it up (exporter OTLP
   * by default; OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER, ...), traces only.
   */
  public static Tracing fromConfig(Config.Tracing c) {
    if (!c.enabled()) {
      return OFF;
    }
    Map<String, String> defaults = new HashMap<>();
    defaults.put("otel.service.name", c.serviceName());
    defaults.put("otel.metrics.exporter", "none"); // Conveyor's metrics are /metrics
    defaults.put("otel.logs.exporter", "none");
    // Java's own HTTP client sends (no gRPC stack in the jar): OTLP over HTTP, port 4318
    defaults.put("otel.exporter.otlp.protocol", "http/protobuf");
    OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder().addPropertiesSupplier(() -> defaults)
        .build().getOpenTelemetrySdk();
    return new Tracing(sdk.getTracer("io.conveyor"), sdk);
  }

  public boolean on() {
    return tracer != null;
  }

  /**
   * A span under the given traceparent (a new trace when it is null or malformed), or null when tracing is
   * off. The caller ends it.
   */
  public Span start(String name, SpanKind kind, String parent) {
    if (tracer == null) {
      return null;
    }
    SpanBuilder b = tracer.spanBuilder(name).setSpanKind(kind);
    if (parent == null) {
      b.setNoParent();
    } else {
      b.setParent(W3CTraceContextPropagator.getInstance().extract(Context.root(), parent, ONE));
    }
    return b.startSpan();
  }

  /** The span's W3C traceparent (what travels with the transaction and in headers), or null for null. */
  public static String traceparent(Span span) {
    if (span == null || !span.getSpanContext().isValid()) {
      return null;
    }
    Map<String, String> carrier = new HashMap<>(2);
    W3CTraceContextPropagator.getInstance().inject(Context.root().with(span), carrier, Map::put);
    return carrier.get(HEADER);
  }

  /** Whether a client's traceparent header is well formed (a malformed one is ignored, as W3C asks). */
  public static boolean wellFormed(String traceparent) {
    return traceparent != null && traceparent.matches("[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
  }

  /** Flushes and stops the exporter this instance set up (none for OFF or of()); runs the callback when done. */
  public void close(Runnable done) {
    if (owned == null) {
      done.run();
    } else {
      owned.shutdown().whenComplete(done);
    }
  }
}
