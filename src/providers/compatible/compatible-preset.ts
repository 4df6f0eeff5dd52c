/**
 * An OpenAI-compatible vendor is data, not code: a base URL, how the key is sent, and the request
 * fields it rejects (dropped before sending).
 */
export interface CompatiblePreset {
  id: string;
  baseUrl: string;
  authHeader: 'authorization-bearer' | 'api-key' | 'none';
  unsupportedParams: readonly string[];
}

export const GENERIC_COMPATIBLE_PRESET: CompatiblePreset = {
  id: 'openai-compatible',
  baseUrl: 'http://127.0.0.1:8000/v1',
  authHeader: 'authorization-bearer',
  unsupportedParams: [],
};
