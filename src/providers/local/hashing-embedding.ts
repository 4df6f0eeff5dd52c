import { fnv1a } from './fnv-hash.js';

const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.25;
const SIGN_SEED = 0x9e3779b9;

/**
 * Feature hashing (the "hashing trick"): word unigrams, word bigrams and character trigrams of each
 * word go into `dimensions` signed buckets, then the vector is L2-normalised. Texts that share words
 * get a high cosine similarity, which is what callers of a search embedding expect. Values are
 * rounded to float32 so the float and base64 encodings carry the same numbers.
 */
export function hashingEmbedding(text: string, dimensions: number): number[] {
  const vector = new Float64Array(dimensions);
  const add = (feature: string, weight: number): void => {
    const bucket = fnv1a(feature) % dimensions;
    const sign = fnv1a(feature, SIGN_SEED) & 1 ? 1 : -1;
    vector[bucket] += sign * weight;
  };
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index];
    add(`w:${word}`, WORD_WEIGHT);
    if (index > 0) add(`b:${words[index - 1]} ${word}`, BIGRAM_WEIGHT);
    const padded = `^${word}$`;
    for (let start = 0; start + 3 <= padded.length; start++) add(`c:${padded.slice(start, start + 3)}`, TRIGRAM_WEIGHT);
  }
  if (words.length === 0) add(`empty:${text.length}`, WORD_WEIGHT);
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  return Array.from(vector, (value) => (norm === 0 ? 0 : Math.fround(value / norm)));
}
