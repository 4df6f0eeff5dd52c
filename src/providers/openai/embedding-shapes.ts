import { GatewayError } from '../../errors/gateway-error.js';
import { cl100k } from '../../tokenizer/cl100k.js';
import { encodeEmbeddingBase64, type EmbeddingRequest, type EmbeddingResponse } from '../../protocol/embeddings.js';

/**
 * Embedding input as a list of texts, for upstreams that take only text. Token arrays (what
 * openai-python sends for tiktoken-encoded input) are decoded with the same o200k/cl100k-family
 * tokenizer the gateway counts with.
 */
export function embeddingInputTexts(input: EmbeddingRequest['input']): string[] {
  if (typeof input === 'string') return [input];
  if (input.length === 0) return [];
  if (typeof input[0] === 'string') return input as string[];
  if (typeof input[0] === 'number') return [decodeTokens(input as number[])];
  return (input as number[][]).map(decodeTokens);
}

function decodeTokens(tokens: number[]): string {
  try {
    return cl100k().decode(tokens);
  } catch (error) {
    throw new GatewayError('invalid_request', `'input' holds a token id outside the cl100k vocabulary: ${error instanceof Error ? error.message : String(error)}`, { param: 'input' });
  }
}

/** For upstreams that report no token count: the gateway's own count of the input. */
export function countEmbeddingTokens(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + cl100k().countTokens(text), 0);
}

/** The canonical embeddings body; base64 is OpenAI's little-endian float32 encoding. */
export function buildEmbeddingResponse(
  model: string,
  vectors: readonly (readonly number[])[],
  promptTokens: number,
  encodingFormat: EmbeddingRequest['encoding_format'],
): EmbeddingResponse {
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encodingFormat === 'base64' ? encodeEmbeddingBase64(vector) : [...vector],
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/**
 * An embeddings request as parts of at most `maxTexts` texts each, for an upstream with a batch
 * limit (createHttpProvider sends them in order); undefined when it fits in one call.
 */
export function splitEmbeddingRequest(request: EmbeddingRequest, maxTexts: number): EmbeddingRequest[] | undefined {
  const texts = embeddingInputTexts(request.input);
  if (texts.length <= maxTexts) return undefined;
  const parts: EmbeddingRequest[] = [];
  for (let start = 0; start < texts.length; start += maxTexts) parts.push({ ...request, input: texts.slice(start, start + maxTexts) });
  return parts;
}

/** The parts' canonical answers as one: vectors in request order, indexes counted across parts, usage added up. */
export function mergeEmbeddingResponses(bodies: unknown[]): EmbeddingResponse {
  const responses = bodies as EmbeddingResponse[];
  const data: EmbeddingResponse['data'] = [];
  let promptTokens = 0;
  let totalTokens = 0;
  for (const response of responses) {
    for (const item of response.data) data.push({ ...item, index: data.length });
    promptTokens += response.usage.prompt_tokens;
    totalTokens += response.usage.total_tokens;
  }
  return { object: 'list', data, model: responses[0]?.model ?? '', usage: { prompt_tokens: promptTokens, total_tokens: totalTokens } };
}
