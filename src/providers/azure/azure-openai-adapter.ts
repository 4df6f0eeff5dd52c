import { withoutGwExtras } from '../../protocol/gw-extras.js';
import { createCompatibleAdapter, createPassthroughStreamTranslator } from '../compatible/compatible-adapter.js';
import type { OperationTranslator, ProviderAdapter, StreamTranslator, TranslationContext, UpstreamRequest } from '../http/provider-adapter.js';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

type Operation = 'chat' | 'completion' | 'embedding';
const PATHS: Record<Operation, string> = { chat: 'chat/completions', completion: 'completions', embedding: 'embeddings' };

/**
 * Azure OpenAI (https://learn.microsoft.com/azure/ai-services/openai/reference): OpenAI's bodies and
 * stream, addressed by deployment: `{base}/openai/deployments/{deployment}/{path}?api-version=…`
 * with an `api-key` header. Settings: `deployment` (default: the upstream model), `apiVersion`.
 */
export function createAzureOpenAIAdapter(): ProviderAdapter {
  const openai = createCompatibleAdapter({ id: 'azure', baseUrl: '', authHeader: 'api-key', unsupportedParams: [] });

  const translator = (operation: Operation): OperationTranslator<Record<string, unknown>> => {
    const base = openai.translators[operation] as OperationTranslator<Record<string, unknown>>;
    return {
      buildRequest: (request, context) => buildAzureRequest(operation, request, context),
      parseResponse: base.parseResponse,
      createStreamTranslator: operation === 'embedding' ? undefined : createAzureStreamTranslator,
    };
  };

  return {
    id: 'azure',
    streamFraming: 'sse',
    translators: { chat: translator('chat'), completion: translator('completion'), embedding: translator('embedding') },
    parseError: openai.parseError,
  };
}

export function buildAzureRequest(
  operation: Operation,
  request: Record<string, unknown>,
  context: TranslationContext & { stream: boolean },
): UpstreamRequest {
  const { baseUrl, settings, upstreamModel, apiKey } = context.target;
  const base = (baseUrl ?? '').replace(/\/+$/, '').replace(/\/openai$/, '');
  const deployment = encodeURIComponent(settings.deployment ?? upstreamModel);
  const apiVersion = encodeURIComponent(settings.apiVersion ?? AZURE_DEFAULT_API_VERSION);
  // Not a spread literal: see bodyFor in src/providers/compatible/compatible-adapter.ts.
  const body: Record<string, unknown> = Object.assign({}, withoutGwExtras(request), { model: upstreamModel });
  if (context.stream) body.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
  return {
    method: 'POST',
    url: `${base}/openai/deployments/${deployment}/${PATHS[operation]}?api-version=${apiVersion}`,
    headers: { 'content-type': 'application/json', 'api-key': apiKey ?? '' },
    body: JSON.stringify(body),
  };
}

/**
 * OpenAI's stream, less Azure's extra chunks: the first events carry only `prompt_filter_results`
 * with empty `choices`, which OpenAI clients do not expect (they read choices[0]).
 */
export function createAzureStreamTranslator(context: TranslationContext): StreamTranslator {
  const passthrough = createPassthroughStreamTranslator(context, 'azure');
  return {
    translate(message) {
      if (message.data.includes('"prompt_filter_results"')) {
        const chunk = JSON.parse(message.data) as { choices?: unknown[]; usage?: unknown };
        if ((chunk.choices ?? []).length === 0 && !chunk.usage) return [];
      }
      return passthrough.translate(message);
    },
    finish: () => passthrough.finish(),
  };
}
