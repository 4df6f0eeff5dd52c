import { cl100k } from '../../tokenizer/cl100k.js';
import { encodeEmbeddingBase64, type EmbeddingRequest, type EmbeddingResponse } from '../../protocol/embeddings.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { hashingEmbedding } from './hashing-embedding.js';
import { applyMarkers } from './local-markers.js';

export const LOCAL_EMBEDDING_DEFAULT_DIMENSIONS = 256;

interface EmbeddingInput {
  text: string;
  tokens: number;
}

/** Embeddings of every input, in input order, from the hashing embedder. */
export async function runLocalEmbedding(invocation: Invocation): Promise<Outcome> {
  const { call, signal } = invocation;
  const request = call.request as unknown as EmbeddingRequest;
  const inputs = embeddingInputs(request.input);
  await applyMarkers(inputs.map((input) => input.text).join('\n'), signal);
  const dimensions = request.dimensions ?? LOCAL_EMBEDDING_DEFAULT_DIMENSIONS;
  const base64 = request.encoding_format === 'base64';
  const promptTokens = inputs.reduce((sum, input) => sum + input.tokens, 0);
  const body: EmbeddingResponse = {
    object: 'list',
    data: inputs.map((input, index) => {
      const vector = hashingEmbedding(input.text, dimensions);
      return { object: 'embedding', index, embedding: base64 ? encodeEmbeddingBase64(vector) : vector };
    }),
    model: call.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
  const usage: Usage = { inputTokens: promptTokens };
  return { kind: 'json', body, usage };
}

/** Token-array inputs (what SDKs send after tokenising) are decoded back to text so they embed like the text would. */
function embeddingInputs(input: EmbeddingRequest['input']): EmbeddingInput[] {
  if (typeof input === 'string') return [{ text: input, tokens: cl100k().countTokens(input) }];
  if (input.length > 0 && typeof input[0] === 'number') return [fromTokens(input as number[])];
  return (input as Array<string | number[]>).map((item) =>
    typeof item === 'string' ? { text: item, tokens: cl100k().countTokens(item) } : fromTokens(item),
  );
}

function fromTokens(tokens: number[]): EmbeddingInput {
  try {
    return { text: cl100k().decode(tokens), tokens: tokens.length };
  } catch {
    return { text: tokens.join(' '), tokens: tokens.length };
  }
}
