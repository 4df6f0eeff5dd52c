import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatCompletionChunk } from '../../protocol/chat.js';
import { withoutGwExtras } from '../../protocol/gw-extras.js';
import { usageFromOpenAI } from '../../protocol/usage.js';
import type { StreamEvent } from '../../pipeline/stage.js';
import type { DeploymentTarget } from '../provider.js';
import type {
  OperationTranslator,
  ProviderAdapter,
  StreamTranslator,
  TranslationContext,
  UpstreamRequest,
} from '../http/provider-adapter.js';
import type { CompatiblePreset } from './compatible-preset.js';
import { parseOpenAIError } from '../http/upstream-error.js';

/**
 * OpenAI-compatible upstreams (OpenAI, Groq, Together, vLLM, Ollama, …). The body is forwarded as the
 * client sent it (unknown-but-valid fields included) with the upstream model name, and answers are
 * passed through byte for byte: only the usage is read, for metering.
 */
export function createCompatibleAdapter(preset: CompatiblePreset): ProviderAdapter {
  const headersFor = (target: DeploymentTarget): Record<string, string> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (target.apiKey && preset.authHeader === 'authorization-bearer') headers.authorization = `Bearer ${target.apiKey}`;
    if (target.apiKey && preset.authHeader === 'api-key') headers['api-key'] = target.apiKey;
    return headers;
  };

  const bodyFor = (request: Record<string, unknown>, target: DeploymentTarget, stream: boolean): string => {
    const body: Record<string, unknown> = { ...withoutGwExtras(request), model: target.upstreamModel };
    for (const param of preset.unsupportedParams) delete body[param];
    if (stream) {
      // Always ask for usage so the call can be metered exactly; the client's own choice is honoured downstream.
      body.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    }
    return JSON.stringify(body);
  };

  const jsonTranslator = (path: string, streams: boolean): OperationTranslator<Record<string, unknown>> => ({
    buildRequest(request, context): UpstreamRequest {
      const baseUrl = (context.target.baseUrl ?? preset.baseUrl).replace(/\/+$/, '');
      return {
        method: 'POST',
        url: baseUrl + path,
        headers: headersFor(context.target),
        body: bodyFor(request, context.target, context.stream),
      };
    },
    parseResponse(body) {
      if (typeof body !== 'object' || body === null) {
        throw new GatewayError('upstream_bad_response', `The provider returned an unexpected body (${preset.id}).`, { provider: preset.id });
      }
      const usage = usageFromOpenAI((body as { usage?: never }).usage);
      return { body, usage, passthrough: true };
    },
    createStreamTranslator: streams ? (context) => createPassthroughStreamTranslator(context, preset.id) : undefined,
  });

  return {
    id: preset.id,
    streamFraming: 'sse',
    translators: {
      chat: jsonTranslator('/chat/completions', true),
      completion: jsonTranslator('/completions', true),
      embedding: jsonTranslator('/embeddings', false),
    },
    parseError: (status, body, headers) => parseOpenAIError(preset.id, status, body, headers),
  };
}

/**
 * Forwards each event's JSON text unchanged. Only events that carry usage (the last one, when
 * include_usage is on) or an error are parsed; a cheap substring test finds them.
 */
export function createPassthroughStreamTranslator(_context: TranslationContext, provider: string): StreamTranslator {
  return {
    translate(message) {
      const data = message.data;
      if (data === '[DONE]') return [];
      if (data.includes('"error"') && data.startsWith('{"error"')) {
        const parsed = JSON.parse(data) as { error?: { message?: string } };
        throw new GatewayError('upstream_bad_response', parsed.error?.message ?? 'The provider stream failed.', { provider });
      }
      const event: StreamEvent = { raw: data };
      if (data.includes('"usage":{')) {
        const chunk = JSON.parse(data) as ChatCompletionChunk;
        if (chunk.usage) {
          event.chunk = chunk;
          event.usage = usageFromOpenAI(chunk.usage);
          event.usageOnly = chunk.choices.length === 0;
        }
      }
      return [event];
    },
    finish: () => [],
  };
}
