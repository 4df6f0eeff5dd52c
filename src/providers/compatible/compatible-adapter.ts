import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatCompletionChunk } from '../../protocol/chat.js';
import { withoutGwExtras } from '../../protocol/gw-extras.js';
import { jsonTextOf } from '../../lib/json-source-text.js';
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
import { hasObjectValue } from '../../lib/json-text-scan.js';
import { bodyWithPublicModel, createChunkModelRewriter, requestTextWithModel } from './public-model.js';

/**
 * OpenAI-compatible upstreams (OpenAI, Groq, Together, vLLM, Ollama, …). The body is forwarded as the
 * client sent it (unknown-but-valid fields included) with the upstream model name, and answers are
 * passed through byte for byte (upstream `id` and `created` included), except `model`, which names
 * the public id: only the usage is read, for metering.
 */
export function createCompatibleAdapter(preset: CompatiblePreset): ProviderAdapter {
  /**
   * A deployment's headers and base URL, made once per deployment (again when its key or URL
   * changes). The headers object is frozen and the same on every call, so the HTTP/1.1 client
   * checks and writes it once (providers/http/http1-client.ts, encodeRequest).
   */
  const deploymentParts = new Map<string, { apiKey: string | undefined; givenUrl: string | undefined; baseUrl: string; headers: Readonly<Record<string, string>> }>();
  const partsFor = (target: DeploymentTarget) => {
    let parts = deploymentParts.get(target.deploymentId);
    if (parts === undefined || parts.apiKey !== target.apiKey || parts.givenUrl !== target.baseUrl) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (target.apiKey && preset.authHeader === 'authorization-bearer') headers.authorization = `Bearer ${target.apiKey}`;
      if (target.apiKey && preset.authHeader === 'api-key') headers['api-key'] = target.apiKey;
      const baseUrl = (target.baseUrl ?? preset.baseUrl).replace(/\/+$/, '');
      parts = { apiKey: target.apiKey, givenUrl: target.baseUrl, baseUrl, headers: Object.freeze(headers) };
      deploymentParts.set(target.deploymentId, parts);
    }
    return parts;
  };

  const bodyFor = (request: Record<string, unknown>, target: DeploymentTarget, stream: boolean): string => {
    if (!stream) {
      const asSent = clientTextFor(request, target.upstreamModel);
      if (asSent !== undefined) return asSent;
    }
    // Copied onto a fresh object, not spread into a literal: `stream_options` added to a spread
    // copy would cost a new hidden class on every call (see buildContext in
    // src/providers/http/create-http-provider.ts).
    const body: Record<string, unknown> = Object.assign({}, withoutGwExtras(request), { model: target.upstreamModel });
    for (const param of preset.unsupportedParams) delete body[param];
    if (stream) {
      // Always ask for usage so the call can be metered exactly; the client's own choice is honoured downstream.
      body.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    }
    return JSON.stringify(body);
  };

  /**
   * The client's own JSON text, with only `model` changed, when the body goes upstream as it came
   * (no gw_* field, no parameter this upstream refuses): the body is not encoded again
   * (lib/json-source-text.ts). Undefined otherwise, and for a body the pipeline made or changed.
   */
  const clientTextFor = (request: Record<string, unknown>, upstreamModel: string): string | undefined => {
    const text = jsonTextOf(request);
    if (text === undefined || typeof request.model !== 'string') return undefined;
    if (withoutGwExtras(request) !== request) return undefined;
    for (const param of preset.unsupportedParams) if (param in request) return undefined;
    return requestTextWithModel(text, request.model, upstreamModel);
  };

  const jsonTranslator = (path: string, streams: boolean, listKey: 'choices' | 'data'): OperationTranslator<Record<string, unknown>> => ({
    buildRequest(request, context): UpstreamRequest {
      const parts = partsFor(context.target);
      return {
        method: 'POST',
        url: parts.baseUrl + path,
        headers: parts.headers,
        body: bodyFor(request, context.target, context.stream),
      };
    },
    parseResponse(body, context) {
      const answer = answerObject(body, context.raw, context.contentType, listKey, preset.id);
      const usage = usageFromOpenAI(answer.usage as never);
      if (typeof answer.model !== 'string' || answer.model === context.model) return { body: answer, usage, passthrough: true };
      // The upstream's name for the model (e.g. a dated or vendor-prefixed one) is not shown: the answer names the public id.
      const raw = bodyWithPublicModel(context.raw, context.model);
      return { body: { ...answer, model: context.model }, usage, passthrough: raw !== undefined, raw };
    },
    createStreamTranslator: streams ? (context) => createPassthroughStreamTranslator(context, preset.id) : undefined,
  });

  return {
    id: preset.id,
    streamFraming: 'sse',
    translators: {
      chat: jsonTranslator('/chat/completions', true, 'choices'),
      completion: jsonTranslator('/completions', true, 'choices'),
      embedding: jsonTranslator('/embeddings', false, 'data'),
    },
    parseError: (status, body, headers) => parseOpenAIError(preset.id, status, body, headers),
  };
}

/**
 * The answer as a JSON object holding its list (`choices`, or `data` for embeddings), else a 502:
 * an HTML error page, an array or a bare value behind a 200 is a broken upstream, never an answer
 * to forward or charge. A body not labelled JSON is accepted when it parses as one (some servers
 * send JSON as text/plain).
 */
function answerObject(body: unknown, raw: Buffer, contentType: string, listKey: 'choices' | 'data', provider: string): Record<string, unknown> {
  let value = body;
  if (Buffer.isBuffer(value)) {
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch {
      value = undefined;
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as Record<string, unknown>)[listKey])) {
    return value as Record<string, unknown>;
  }
  const shown = contentType ? `, ${contentType.split(';')[0]}` : '';
  throw new GatewayError('upstream_bad_response', `The provider returned an unexpected body (${provider}${shown}): not a JSON object with "${listKey}".`, { provider });
}

/**
 * Forwards each event's JSON text as it came, except `model`, set to the public id when the
 * upstream names the model otherwise (public-model.ts: a splice, never a re-encoding; a chunk
 * that names the public id already is not touched). Only events that carry usage (the last one,
 * when include_usage is on) or an error are parsed; a cheap substring test finds them.
 */
export function createPassthroughStreamTranslator(context: TranslationContext, provider: string): StreamTranslator {
  const withPublicModel = createChunkModelRewriter(context.model);
  return {
    translate(message) {
      if (message.data === '[DONE]') return [];
      if (message.data.includes('"error"') && message.data.startsWith('{"error"')) {
        const parsed = JSON.parse(message.data) as { error?: { message?: string } };
        throw new GatewayError('upstream_bad_response', parsed.error?.message ?? 'The provider stream failed.', { provider });
      }
      const data = withPublicModel(message.data);
      const event: StreamEvent = { raw: data };
      if (hasObjectValue(data, '"usage"')) {
        const chunk = JSON.parse(data) as ChatCompletionChunk;
        if (chunk.usage) {
          event.chunk = chunk;
          event.usage = usageFromOpenAI(chunk.usage);
          event.usageOnly = (chunk.choices ?? []).length === 0;
        }
      }
      return [event];
    },
    finish: () => [],
  };
}
