import type { CompatiblePreset } from '../compatible/compatible-preset.js';

/**
 * Base URLs of the OpenAI-compatible family, from each vendor's API reference. `unsupportedParams`
 * lists request fields the vendor rejects with a 400 (they are dropped before sending, and listed
 * in docs/providers.md).
 */
export const OPENAI_COMPATIBLE_PRESETS = [
  { id: 'openai', baseUrl: 'https://api.openai.com/v1', authHeader: 'authorization-bearer', unsupportedParams: [] },
  // https://console.groq.com/docs/openai#unsupported-features
  { id: 'groq', baseUrl: 'https://api.groq.com/openai/v1', authHeader: 'authorization-bearer', unsupportedParams: ['logprobs', 'top_logprobs', 'logit_bias', 'store', 'metadata'] },
  { id: 'together', baseUrl: 'https://api.together.xyz/v1', authHeader: 'authorization-bearer', unsupportedParams: ['store', 'metadata', 'service_tier'] },
  { id: 'fireworks', baseUrl: 'https://api.fireworks.ai/inference/v1', authHeader: 'authorization-bearer', unsupportedParams: ['store', 'metadata', 'service_tier'] },
  { id: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', authHeader: 'authorization-bearer', unsupportedParams: ['n', 'logit_bias', 'seed', 'store', 'metadata', 'service_tier', 'parallel_tool_calls'] },
  { id: 'xai', baseUrl: 'https://api.x.ai/v1', authHeader: 'authorization-bearer', unsupportedParams: ['store', 'metadata', 'service_tier'] },
  // https://docs.mistral.ai/api/#tag/chat
  { id: 'mistral', baseUrl: 'https://api.mistral.ai/v1', authHeader: 'authorization-bearer', unsupportedParams: ['logit_bias', 'logprobs', 'top_logprobs', 'store', 'metadata', 'service_tier', 'user', 'seed'] },
  { id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', authHeader: 'authorization-bearer', unsupportedParams: ['store', 'metadata', 'service_tier'] },
  { id: 'perplexity', baseUrl: 'https://api.perplexity.ai', authHeader: 'authorization-bearer', unsupportedParams: ['n', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls', 'store', 'metadata', 'service_tier', 'user'] },
  { id: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1', authHeader: 'authorization-bearer', unsupportedParams: ['store', 'metadata', 'service_tier'] },
  { id: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', authHeader: 'authorization-bearer', unsupportedParams: ['logit_bias', 'logprobs', 'top_logprobs', 'store', 'metadata', 'service_tier', 'parallel_tool_calls'] },
  { id: 'lmstudio', baseUrl: 'http://127.0.0.1:1234/v1', authHeader: 'authorization-bearer', unsupportedParams: ['logit_bias', 'store', 'metadata', 'service_tier'] },
] as const satisfies readonly CompatiblePreset[];

export type CompatiblePresetId = (typeof OPENAI_COMPATIBLE_PRESETS)[number]['id'];

export function findCompatiblePreset(id: string): CompatiblePreset | undefined {
  return OPENAI_COMPATIBLE_PRESETS.find((preset) => preset.id === id);
}
