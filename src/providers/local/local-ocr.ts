import { invalidRequest } from '../../errors/gateway-error.js';
import { documentReference, type OcrRequest, type OcrResponse } from '../../protocol/ocr.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { parseDataUri } from './data-uri.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { pdfPageTexts } from './pdf-text.js';

/** OCR of data-URI documents: text, markdown and HTML read directly, simple PDFs page by page. */
export async function runLocalOcr(invocation: Invocation): Promise<Outcome> {
  const { call } = invocation;
  const request = call.request as unknown as OcrRequest;
  const reference = documentReference(request.document);
  if (/^https?:\/\//i.test(reference)) {
    throw invalidRequest('The local provider is offline and cannot fetch document URLs; send the document as a data URI.', 'document');
  }
  const document = parseDataUri(reference);
  if (!document) throw invalidRequest('document must be a data URI (data:<media type>;base64,<data>) for the local provider.', 'document');
  const pages = ocrPages(document.mediaType, document.bytes).map((markdown, index) => ({ index, markdown }));
  const body: OcrResponse = { pages, model: call.model, usage_info: { pages_processed: pages.length } };
  const usage: Usage = { ocrPages: pages.length };
  return { kind: 'json', body, usage };
}

export function ocrPages(mediaType: string, bytes: Buffer): string[] {
  if (mediaType === 'text/plain' || mediaType === 'text/markdown') {
    // A form feed is the plain-text page break.
    return bytes.toString('utf8').split('\f').map((page) => page.trim());
  }
  if (mediaType === 'text/html') return [htmlToMarkdown(bytes.toString('utf8'))];
  if (mediaType === 'application/pdf') {
    const pages = pdfPageTexts(bytes);
    if (pages.length > 0) return pages;
    return [`[local OCR: no extractable text in this ${bytes.length}-byte PDF]`];
  }
  return [`[local OCR: ${mediaType} document of ${bytes.length} bytes; the local provider reads text only]`];
}
