import { cl100k } from '../../tokenizer/cl100k.js';

/** The result of cutting generated text to the token budget. */
export interface TokenCut {
  text: string;
  /** The text split at token boundaries, for streaming token by token. */
  pieces: string[];
  tokenCount: number;
  truncated: boolean;
}

/**
 * Cuts `text` to at most `maxTokens` tokens and splits it into streamable pieces. The tokenizer's
 * generator decoder holds back bytes of an unfinished multi-byte character, so no piece carries
 * U+FFFD; a piece is therefore roughly, not exactly, one token.
 */
export function cutToTokens(text: string, maxTokens: number | undefined): TokenCut {
  const allTokens = cl100k().encode(text);
  const truncated = maxTokens !== undefined && allTokens.length > maxTokens;
  const tokens = truncated ? allTokens.slice(0, maxTokens) : allTokens;
  const pieces = [...cl100k().decodeGenerator(tokens)].filter((piece) => piece.length > 0);
  return { text: pieces.join(''), pieces, tokenCount: tokens.length, truncated };
}

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : cl100k().countTokens(text);
}

/** Cuts at the earliest stop sequence; the sequence itself is not part of the output, as with OpenAI. */
export function cutAtStop(text: string, stop: string | readonly string[] | null | undefined): { text: string; stopped: boolean } {
  const sequences = stop === null || stop === undefined ? [] : typeof stop === 'string' ? [stop] : stop;
  let cutAt = -1;
  for (const sequence of sequences) {
    if (sequence.length === 0) continue;
    const position = text.indexOf(sequence);
    if (position !== -1 && (cutAt === -1 || position < cutAt)) cutAt = position;
  }
  return cutAt === -1 ? { text, stopped: false } : { text: text.slice(0, cutAt), stopped: true };
}
