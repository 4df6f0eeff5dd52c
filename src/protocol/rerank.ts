import { z } from 'zod';

/** SPEC "Rerank" (Cohere's shape). Documents may be strings or objects with a text field. */
export const rerankRequestSchema = z.looseObject({
  model: z.string().min(1),
  query: z.string().min(1),
  documents: z
    .array(z.union([z.string(), z.looseObject({ text: z.string() })]))
    .min(1)
    .max(1000),
  top_n: z.number().int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
});
export type RerankRequest = z.infer<typeof rerankRequestSchema>;

export interface RerankResponse {
  id: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  meta: { billed_units: { search_units: number } };
}

export function documentText(document: RerankRequest['documents'][number]): string {
  return typeof document === 'string' ? document : document.text;
}
