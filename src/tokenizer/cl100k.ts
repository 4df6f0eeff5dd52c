import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * OpenAI's cl100k_base byte-pair encoding, held compactly: every token's bytes in one Uint8Array,
 * their offsets, and an open-addressing hash table from bytes to rank (about 2.5 MB, outside the
 * JavaScript heap). The vocabulary comes from gpt-tokenizer's rank table, read once as data; its
 * own encoder keeps ~100,000 strings in a Map and the module source alive (~12 MB of heap, plus
 * ~25 MB of start-up garbage), which was a tenth of the gateway's memory.
 *
 * Text that looks like a special token (`<|endoftext|>`) is encoded as plain text: gw never sends
 * control tokens, it only counts and cuts text.
 */
export interface Cl100k {
  countTokens(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
  /** Text piece by piece, one per token, holding back the bytes of an unfinished character. */
  decodeGenerator(tokens: readonly number[]): Generator<string>;
}

/** tiktoken's cl100k pre-tokenizer: contractions, words, 1–3 digit runs, punctuation, whitespace. */
const PIECE_PATTERN = /'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s/gu;

const TABLE_BITS = 18;
/** Pieces up to this many bytes are merged by scanning their pairs; longer ones through a heap. */
const SCAN_MERGE_MAX_BYTES = 256;
/** A heap key is rank·2³² + the pair's start: below 2⁵³, exact in a double. */
const PAIR_KEY_SCALE = 2 ** 32;
const PIECE_CACHE_ENTRIES = 20_000;
const TABLE_MASK = (1 << TABLE_BITS) - 1;

interface Vocabulary {
  bytes: Uint8Array;
  /** Token r's bytes are bytes[offsets[r] .. offsets[r + 1]). */
  offsets: Uint32Array;
  /** rank + 1 at the slot of its bytes' hash (linear probing); 0 = empty. */
  table: Int32Array;
}

function hashBytes(source: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ source[index]!, 0x01000193);
  return hash >>> 0;
}

/**
 * Visits gpt-tokenizer's rank list in rank order: a JavaScript module of array literals holding
 * strings and byte arrays, scanned in place (no copy of the 1 MB source, no array of 100,000
 * strings held at once, so start-up makes little garbage).
 */
function forEachRankedToken(visit: (token: string | number[]) => void): number {
  const require = createRequire(import.meta.url);
  const packageRoot = require.resolve('gpt-tokenizer/package.json').replace(/package\.json$/, '');
  const source = readFileSync(`${packageRoot}esm/bpeRanks/cl100k_base.js`, 'utf8');
  const arrayStart = /const c\d+ = \[/g;
  let count = 0;
  for (let found = arrayStart.exec(source); found !== null; found = arrayStart.exec(source)) {
    let at = arrayStart.lastIndex;
    for (;;) {
      while (at < source.length && /[\s,]/.test(source[at]!)) at++;
      const character = source[at];
      if (character === ']') break;
      if (character === '"') {
        const [text, after] = readStringLiteral(source, at);
        visit(text);
        at = after;
      } else if (character === '[') {
        const close = source.indexOf(']', at);
        visit(source.slice(at + 1, close).split(',').map((value) => Number(value.trim())));
        at = close + 1;
      } else {
        throw new Error(`cl100k rank table: unexpected ${JSON.stringify(character)} at ${at}`);
      }
      count++;
    }
    arrayStart.lastIndex = at;
  }
  return count;
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' };

/** A double-quoted JavaScript string literal starting at `at`: its value and the index after it. */
function readStringLiteral(source: string, at: number): [string, number] {
  let index = at + 1;
  let plainFrom = index;
  let value = '';
  for (;;) {
    const character = source[index];
    if (character === undefined) throw new Error('cl100k rank table: unterminated string');
    if (character === '"') return [value + source.slice(plainFrom, index), index + 1];
    if (character !== '\\') {
      index++;
      continue;
    }
    value += source.slice(plainFrom, index);
    const code = source[index + 1]!;
    if (code === 'x') {
      value += String.fromCharCode(parseInt(source.slice(index + 2, index + 4), 16));
      index += 4;
    } else if (code === 'u' && source[index + 2] === '{') {
      const close = source.indexOf('}', index);
      value += String.fromCodePoint(parseInt(source.slice(index + 3, close), 16));
      index = close + 1;
    } else if (code === 'u') {
      value += String.fromCharCode(parseInt(source.slice(index + 2, index + 6), 16));
      index += 6;
    } else {
      value += SIMPLE_ESCAPES[code] ?? code;
      index += 2;
    }
    plainFrom = index;
  }
}

function buildVocabulary(): Vocabulary {
  const encoder = new TextEncoder();
  // One buffer for every token's bytes, written in place: 100,000 small typed arrays would each
  // get their own allocation. 1 MiB of source holds well under 4 MiB of token bytes; grown if not.
  let buffer = new Uint8Array(4 << 20);
  const offsets: number[] = [0];
  let end = 0;
  const count = forEachRankedToken((token) => {
    const needed = typeof token === 'string' ? token.length * 3 : token.length;
    if (end + needed > buffer.length) {
      const grown = new Uint8Array(buffer.length * 2);
      grown.set(buffer.subarray(0, end));
      buffer = grown;
    }
    if (typeof token === 'string') end += encoder.encodeInto(token, buffer.subarray(end)).written;
    else {
      buffer.set(token, end);
      end += token.length;
    }
    offsets.push(end);
  });
  if (count !== 100_256) throw new Error(`cl100k rank table: expected 100256 tokens, read ${count}`);
  const bytes = buffer.slice(0, end);
  const offsetArray = Uint32Array.from(offsets);
  const table = new Int32Array(1 << TABLE_BITS);
  for (let rank = 0; rank < count; rank++) {
    let slot = hashBytes(bytes, offsetArray[rank]!, offsetArray[rank + 1]!) & TABLE_MASK;
    while (table[slot] !== 0) slot = (slot + 1) & TABLE_MASK;
    table[slot] = rank + 1;
  }
  return { bytes, offsets: offsetArray, table };
}

export function createCl100k(): Cl100k {
  const { bytes, offsets, table } = buildVocabulary();
  const encoder = new TextEncoder();
  let scratch = new Uint8Array(1024);
  // Merge state for one piece: part starts and the rank of each part joined with its right neighbour.
  let starts = new Int32Array(1024);
  let pairRanks = new Int32Array(1024);

  /** Rank of source[start..end), or -1 when those bytes are not one token. */
  function rankOf(source: Uint8Array, start: number, end: number): number {
    const length = end - start;
    let slot = hashBytes(source, start, end) & TABLE_MASK;
    for (;;) {
      const entry = table[slot]!;
      if (entry === 0) return -1;
      const rank = entry - 1;
      const offset = offsets[rank]!;
      if (offsets[rank + 1]! - offset === length) {
        let same = true;
        for (let index = 0; index < length; index++) {
          if (bytes[offset + index] !== source[start + index]) {
            same = false;
            break;
          }
        }
        if (same) return rank;
      }
      slot = (slot + 1) & TABLE_MASK;
    }
  }

  /**
   * Byte-pair merge of scratch[0..length): repeatedly join the adjacent pair whose joined bytes
   * have the lowest rank (the leftmost of equals), as tiktoken does. Leaves the parts' boundaries
   * in `starts[0..parts]` and returns the number of parts. Short pieces (nearly all) use a plain
   * scan over the pairs; long ones, where that scan is quadratic (60 KB of one letter took
   * seconds), a heap of pairs: the same merges in the same order, in O(n log n).
   */
  function mergePiece(length: number): number {
    if (starts.length < length + 1) {
      starts = new Int32Array(length * 2);
      pairRanks = new Int32Array(length * 2);
    }
    return length > SCAN_MERGE_MAX_BYTES ? mergeLongPiece(length) : mergeShortPiece(length);
  }

  function mergeShortPiece(length: number): number {
    let parts = length;
    for (let index = 0; index <= length; index++) starts[index] = index;
    for (let index = 0; index < length - 1; index++) pairRanks[index] = rankOf(scratch, index, index + 2);
    pairRanks[length - 1] = -1;
    while (parts > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let index = 0; index < parts - 1; index++) {
        const rank = pairRanks[index]!;
        if (rank >= 0 && rank < bestRank) {
          bestRank = rank;
          best = index;
        }
      }
      if (best < 0) break;
      // Join part best with part best + 1.
      starts.copyWithin(best + 1, best + 2, parts + 1);
      pairRanks.copyWithin(best + 1, best + 2, parts);
      parts -= 1;
      pairRanks[best] = best + 1 < parts ? rankOf(scratch, starts[best]!, starts[best + 2]!) : -1;
      if (best > 0) pairRanks[best - 1] = rankOf(scratch, starts[best - 1]!, starts[best + 1]!);
    }
    return parts;
  }

  /**
   * The heap merge. A part is named by its first byte's index; `following[p]` is where the next
   * part starts (`length` for the last), `preceding[p]` where the previous one does (-1 for the
   * first), and pairRanks[p] the rank of p joined with its next part (-1: no such token). The heap
   * holds (rank, start) pairs keyed rank·2³² + start, so it pops the lowest rank and, among equal
   * ranks, the leftmost pair. Entries go stale when a part is joined; a popped entry counts only
   * while its part is alive and its pair still has that rank.
   */
  function mergeLongPiece(length: number): number {
    const following = new Int32Array(length);
    const preceding = new Int32Array(length);
    const alive = new Uint8Array(length).fill(1);
    const heap = new MinHeap(length);
    for (let index = 0; index < length; index++) {
      following[index] = index + 1;
      preceding[index] = index - 1;
      const rank = index + 2 <= length ? rankOf(scratch, index, index + 2) : -1;
      pairRanks[index] = rank;
      if (rank >= 0) heap.push(rank * PAIR_KEY_SCALE + index);
    }
    const repair = (start: number) => {
      const next = following[start]!;
      const rank = next < length ? rankOf(scratch, start, following[next]!) : -1;
      pairRanks[start] = rank;
      if (rank >= 0) heap.push(rank * PAIR_KEY_SCALE + start);
    };
    while (heap.size > 0) {
      const key = heap.pop();
      const start = key % PAIR_KEY_SCALE;
      const rank = (key - start) / PAIR_KEY_SCALE;
      if (alive[start] === 0 || pairRanks[start] !== rank) continue;
      const joined = following[start]!;
      alive[joined] = 0;
      following[start] = following[joined]!;
      if (following[start]! < length) preceding[following[start]!] = start;
      repair(start);
      if (preceding[start]! >= 0) repair(preceding[start]!);
    }
    let parts = 0;
    for (let start = 0; start < length; start = following[start]!) starts[parts++] = start;
    starts[parts] = length;
    return parts;
  }

  /** UTF-8 bytes of `piece` into scratch; returns their count. */
  function encodePiece(piece: string): number {
    if (scratch.length < piece.length * 3) scratch = new Uint8Array(piece.length * 3);
    return encoder.encodeInto(piece, scratch).written;
  }

  /** Token counts of recent pieces (words recur): most pieces are counted once per process. */
  const pieceCounts = new Map<string, number>();

  function countPiece(piece: string): number {
    const known = pieceCounts.get(piece);
    if (known !== undefined) return known;
    const length = encodePiece(piece);
    const count = length === 1 || rankOf(scratch, 0, length) >= 0 ? 1 : mergePiece(length);
    if (pieceCounts.size >= PIECE_CACHE_ENTRIES) pieceCounts.clear();
    pieceCounts.set(piece, count);
    return count;
  }

  function countTokens(text: string): number {
    let total = 0;
    const pattern = PIECE_PATTERN;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) total += countPiece(match[0]);
    return total;
  }

  function encode(text: string): number[] {
    const tokens: number[] = [];
    for (const match of text.matchAll(PIECE_PATTERN)) {
      const length = encodePiece(match[0]);
      const whole = rankOf(scratch, 0, length);
      if (whole >= 0) {
        tokens.push(whole);
        continue;
      }
      const parts = mergePiece(length);
      for (let part = 0; part < parts; part++) tokens.push(rankOf(scratch, starts[part]!, starts[part + 1]!));
    }
    return tokens;
  }

  function tokenBytes(token: number): Uint8Array {
    if (!Number.isInteger(token) || token < 0 || token >= offsets.length - 1) throw new RangeError(`not a cl100k token: ${token}`);
    return bytes.subarray(offsets[token]!, offsets[token + 1]!);
  }

  function decode(tokens: readonly number[]): string {
    const decoder = new TextDecoder();
    let text = '';
    for (const token of tokens) text += decoder.decode(tokenBytes(token), { stream: true });
    return text + decoder.decode();
  }

  function* decodeGenerator(tokens: readonly number[]): Generator<string> {
    const decoder = new TextDecoder();
    for (const token of tokens) yield decoder.decode(tokenBytes(token), { stream: true });
    const rest = decoder.decode();
    if (rest) yield rest;
  }

  return { countTokens, encode, decode, decodeGenerator };
}

/** A binary min-heap of numbers in a Float64Array, sized for the most entries it will hold at once. */
class MinHeap {
  private items: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.items = new Float64Array(Math.max(16, capacity));
  }

  push(value: number): void {
    if (this.size === this.items.length) {
      const grown = new Float64Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    const items = this.items;
    let index = this.size++;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (items[parent]! <= value) break;
      items[index] = items[parent]!;
      index = parent;
    }
    items[index] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items[--this.size]!;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && items[child + 1]! < items[child]!) child++;
      if (items[child]! >= last) break;
      items[index] = items[child]!;
      index = child;
    }
    items[index] = last;
    return top;
  }
}

let shared: Cl100k | undefined;

/** The process's one cl100k instance, built on first use (~60 ms). */
export function cl100k(): Cl100k {
  return (shared ??= createCl100k());
}
