import type { Operation } from '../../protocol/endpoints.js';
import type { ModelPrice } from '../../metering/model-price.js';

/** One model the built-in `local` provider serves, as the catalog lists it. */
export interface LocalModel {
  readonly id: string;
  readonly ownedBy: 'local';
  readonly description: string;
  readonly operations: readonly Operation[];
  /** Small but non-zero, so metering and credit checks are visible offline. */
  readonly price: ModelPrice;
}

const LABEL = 'built-in deterministic offline model (local)';

export const LOCAL_MODELS: readonly LocalModel[] = [
  {
    id: 'local-chat',
    ownedBy: 'local',
    description: `${LABEL}: chat and text completions that echo the prompt`,
    operations: ['chat', 'completion'],
    price: { inputPerMillion: '0.10', outputPerMillion: '0.40', maxOutputTokens: 4096, contextWindow: 128000 },
  },
  {
    id: 'local-chat-mini',
    ownedBy: 'local',
    description: `${LABEL}: smaller chat and text completions that echo the prompt`,
    operations: ['chat', 'completion'],
    price: { inputPerMillion: '0.05', outputPerMillion: '0.20', maxOutputTokens: 2048, contextWindow: 32000 },
  },
  {
    id: 'local-embed',
    ownedBy: 'local',
    description: `${LABEL}: feature-hashing embeddings, 256 dimensions by default`,
    operations: ['embedding'],
    price: { inputPerMillion: '0.02' },
  },
  {
    id: 'local-moderation',
    ownedBy: 'local',
    description: `${LABEL}: keyword moderation over the standard categories`,
    operations: ['moderation'],
    price: { inputPerMillion: '0.01' },
  },
  {
    id: 'local-rerank',
    ownedBy: 'local',
    description: `${LABEL}: lexical BM25 reranking`,
    operations: ['rerank'],
    price: { perSearchUnit: '0.001' },
  },
  {
    id: 'local-ocr',
    ownedBy: 'local',
    description: `${LABEL}: text extraction from text, HTML and simple PDF data URIs`,
    operations: ['ocr'],
    price: { perOcrPage: '0.001' },
  },
  {
    id: 'local-image',
    ownedBy: 'local',
    description: `${LABEL}: solid-colour PNG images derived from the prompt`,
    operations: ['image_generation', 'image_edit'],
    price: { perImage: { default: '0.002' } },
  },
  {
    id: 'local-tts',
    ownedBy: 'local',
    description: `${LABEL}: tone-sequence speech in mp3, wav or opus`,
    operations: ['speech'],
    price: { speechPerMillionCharacters: '1.00' },
  },
  {
    id: 'local-stt',
    ownedBy: 'local',
    description: `${LABEL}: transcription that recovers text embedded by local speech`,
    operations: ['transcription'],
    price: { transcriptionPerMinute: '0.001' },
  },
  {
    id: 'local-video',
    ownedBy: 'local',
    description: `${LABEL}: asynchronous video jobs producing a small MP4`,
    operations: ['video'],
    price: { perVideoSecond: '0.001' },
  },
];
