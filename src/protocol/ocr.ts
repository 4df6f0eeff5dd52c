import { z } from 'zod';

/** SPEC "OCR": document is a reference, a URL or a data URI (Mistral OCR's document_url form). */
export const ocrRequestSchema = z.looseObject({
  model: z.string().min(1),
  document: z.union([
    z.string().min(1),
    z.looseObject({ type: z.string(), document_url: z.string().optional(), image_url: z.string().optional() }),
  ]),
});
export type OcrRequest = z.infer<typeof ocrRequestSchema>;

export interface OcrResponse {
  pages: Array<{ index: number; markdown: string }>;
  model?: string;
  usage_info?: { pages_processed: number };
}

export function documentReference(document: OcrRequest['document']): string {
  if (typeof document === 'string') return document;
  return document.document_url ?? document.image_url ?? '';
}
