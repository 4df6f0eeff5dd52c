import { createAnthropicAdapter } from './anthropic/anthropic-adapter.js';
import { createAzureOpenAIAdapter } from './azure/azure-openai-adapter.js';
import { createBedrockAdapter } from './bedrock/bedrock-adapter.js';
import { createCohereAdapter } from './cohere/cohere-adapter.js';
import { createCompatibleAdapter } from './compatible/compatible-adapter.js';
import { GENERIC_COMPATIBLE_PRESET } from './compatible/compatible-preset.js';
import { createGeminiAdapter } from './gemini/gemini-adapter.js';
import { createHttpProvider, type HttpProviderOptions } from './http/create-http-provider.js';
import type { ProviderAdapter } from './http/provider-adapter.js';
import type { UpstreamClient } from './http/upstream-client.js';
import { createMistralOcrAdapter } from './mistral/mistral-ocr-adapter.js';
import { createOpenAIMediaAdapter } from './openai/openai-media-adapter.js';
import { OPENAI_COMPATIBLE_PRESETS } from './openai/presets.js';
import type { Provider } from './provider.js';

/** One adapter serving the operations of several, e.g. OpenAI's chat (compatible) plus its media endpoints. */
function mergeAdapters(primary: ProviderAdapter, extra: ProviderAdapter): ProviderAdapter {
  return { ...primary, translators: { ...primary.translators, ...extra.translators } };
}

/**
 * Every provider gw can route to, by the id deployments name in `provider`. Adding a provider is a
 * folder under providers/ plus one line here.
 */
export function createProviderRegistry(upstream: UpstreamClient, builtins: readonly Provider[], options: HttpProviderOptions = {}): Map<string, Provider> {
  const adapters: ProviderAdapter[] = [
    createCompatibleAdapter(GENERIC_COMPATIBLE_PRESET),
    ...OPENAI_COMPATIBLE_PRESETS.map((preset) => {
      const compatible = createCompatibleAdapter(preset);
      if (preset.id === 'openai') return mergeAdapters(compatible, createOpenAIMediaAdapter('openai'));
      if (preset.id === 'mistral') return mergeAdapters(compatible, createMistralOcrAdapter());
      return compatible;
    }),
    createAnthropicAdapter(),
    createGeminiAdapter(),
    createCohereAdapter(),
    createBedrockAdapter(),
    createAzureOpenAIAdapter(),
    createMistralOcrAdapter(),
  ];
  const registry = new Map<string, Provider>();
  for (const adapter of adapters) registry.set(adapter.id, createHttpProvider(adapter, upstream, {}, options));
  for (const provider of builtins) registry.set(provider.id, provider);
  return registry;
}
