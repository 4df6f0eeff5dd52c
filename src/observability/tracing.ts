import type { Span, Tracer } from '@opentelemetry/api';
import type { GatewayCall, Next, Outcome, Stage } from '../pipeline/stage.js';
import { usageTotals } from '../protocol/usage.js';
import { tapStream } from '../lib/tap-stream.js';

export interface Tracing {
  /** Undefined when tracing is off: then nothing here runs on the request path. */
  tracer: Tracer | undefined;
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry traces, off by default. Turned on by the standard variables (an OTLP endpoint in
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_TRACES_EXPORTER=otlp);
 * the exporter reads the rest (protocol, headers) itself. The SDK is loaded only when on.
 */
export async function startTracing(enabled: boolean, serviceName: string): Promise<Tracing> {
  if (!enabled) return { tracer: undefined, shutdown: async () => {} };
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = new OTLPTraceExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter as never, { scheduledDelayMillis: 500 })],
  });
  return { tracer: provider.getTracer('gw'), shutdown: () => provider.shutdown() };
}

/** Wraps a stage in a span named `gw.stage.<name>`. */
export function traceStage(stage: Stage, tracer: Tracer): Stage {
  return {
    name: stage.name,
    run: (call, next) =>
      tracer.startActiveSpan(`gw.stage.${stage.name}`, async (span) => {
        try {
          return await stage.run(call, next);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: 2 });
          throw error;
        } finally {
          span.end();
        }
      }),
  };
}

const OPERATION_NAMES: Record<string, string> = { chat: 'chat', completion: 'text_completion', embedding: 'embeddings' };

/**
 * The upstream call span, with GenAI semantic-convention attributes (gen_ai.*). For streams the
 * span ends with the stream, so it covers the whole generation and carries its usage.
 */
export function traceUpstream(route: Next, tracer: Tracer): Next {
  return (call) =>
    tracer.startActiveSpan(`${OPERATION_NAMES[call.operation] ?? call.operation} ${call.model}`, { kind: 2 }, async (span): Promise<Outcome> => {
      span.setAttributes({
        'gen_ai.operation.name': OPERATION_NAMES[call.operation] ?? call.operation,
        'gen_ai.request.model': call.model,
        'gw.request_id': call.requestId,
      });
      const request = call.request as Record<string, unknown>;
      if (typeof request.max_tokens === 'number') span.setAttribute('gen_ai.request.max_tokens', request.max_tokens);
      if (typeof request.temperature === 'number') span.setAttribute('gen_ai.request.temperature', request.temperature);
      let outcome: Outcome;
      try {
        outcome = await route(call);
      } catch (error) {
        finish(span, call, error);
        throw error;
      }
      if (outcome.kind !== 'stream') {
        finish(span, call, undefined, outcome.usage);
        return outcome;
      }
      let usage = call.record.usage;
      return {
        kind: 'stream',
        events: tapStream(outcome.events, {
          onItem(event) {
            if (event.usage) usage = event.usage;
          },
          onEnd({ error }) {
            finish(span, call, error, usage);
          },
        }),
      };
    });
}

function finish(span: Span, call: GatewayCall, error: unknown, usage = call.record.usage): void {
  if (call.record.provider) span.setAttribute('gen_ai.system', call.record.provider);
  if (call.record.deploymentId) span.setAttribute('gw.deployment_id', call.record.deploymentId);
  if (call.record.attempts) span.setAttribute('gw.attempts', call.record.attempts);
  if (usage) {
    const totals = usageTotals(usage);
    span.setAttributes({ 'gen_ai.usage.input_tokens': totals.promptTokens, 'gen_ai.usage.output_tokens': totals.completionTokens });
  }
  if (error) {
    span.recordException(error as Error);
    span.setStatus({ code: 2 });
  }
  span.end();
}
