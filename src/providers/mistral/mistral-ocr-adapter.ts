import type { ProviderAdapter } from '../http/provider-adapter.js';
import { extractErrorText, upstreamError } from '../http/upstream-error.js';
import { mistralOcrTranslator } from './mistral-ocr.js';

/**
 * Mistral's OCR endpoint. Mistral chat is OpenAI-compatible and served by the compatible adapter
 * with the `mistral` preset; this adapter adds only what that one cannot express.
 */
export function createMistralOcrAdapter(): ProviderAdapter {
  return {
    id: 'mistral-ocr',
    streamFraming: 'sse',
    translators: { ocr: mistralOcrTranslator },
    parseError(status, body, headers) {
      const { message, type } = extractErrorText(body);
      return upstreamError({ provider: 'mistral', status, message, upstreamType: type, headers });
    },
  };
}
