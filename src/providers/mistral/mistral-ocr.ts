import { z } from 'zod';
import type { OcrRequest, OcrResponse } from '../../protocol/ocr.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';

export const MISTRAL_BASE_URL = 'https://api.mistral.ai';

const ocrResponseSchema = z.looseObject({
  pages: z.array(z.looseObject({ index: z.number(), markdown: z.string() })),
  usage_info: z.looseObject({ pages_processed: z.number().nullish() }).nullish(),
});

/** A string reference becomes a document_url, or an image_url when it is an image data URI or image link. */
export function mistralDocument(document: OcrRequest['document']): Record<string, unknown> {
  if (typeof document !== 'string') {
    if (document.image_url) return { type: 'image_url', image_url: document.image_url };
    return { type: 'document_url', document_url: document.document_url ?? '' };
  }
  const isImage = /^data:image\//i.test(document) || /\.(png|jpe?g|webp|gif|avif|tiff?)(?:[?#].*)?$/i.test(document);
  return isImage ? { type: 'image_url', image_url: document } : { type: 'document_url', document_url: document };
}

/** Mistral OCR (https://docs.mistral.ai/api/#tag/ocr): `POST /v1/ocr`, priced per page processed. */
export const mistralOcrTranslator: OperationTranslator<OcrRequest> = {
  buildRequest(request, context) {
    const base = (context.target.baseUrl ?? MISTRAL_BASE_URL).replace(/\/+$/, '').replace(/\/v1$/, '');
    return {
      method: 'POST',
      url: `${base}/v1/ocr`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${context.target.apiKey ?? ''}` },
      body: JSON.stringify({ model: context.target.upstreamModel, document: mistralDocument(request.document) }),
    };
  },
  parseResponse(body, context) {
    const parsed = parseUpstreamBody(ocrResponseSchema, body, 'mistral', 'The mistral upstream answered with an unreadable OCR result');
    const pagesProcessed = parsed.usage_info?.pages_processed ?? parsed.pages.length;
    const response: OcrResponse = {
      pages: parsed.pages.map((page) => ({ index: page.index, markdown: page.markdown })),
      model: context.model,
      usage_info: { pages_processed: pagesProcessed },
    };
    return { body: response, usage: { ocrPages: pagesProcessed } };
  },
};
