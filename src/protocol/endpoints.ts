/**
 * The operations gw serves. Each inference route maps to one; a provider declares which it supports,
 * and the pipeline's stage list per operation is the spec's "Features" column.
 */
export const OPERATIONS = [
  'chat',
  'completion',
  'embedding',
  'image_generation',
  'image_edit',
  'speech',
  'transcription',
  'video',
  'moderation',
  'rerank',
  'ocr',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export const OPERATION_PATHS: Record<Operation, string> = {
  chat: '/v1/chat/completions',
  completion: '/v1/completions',
  embedding: '/v1/embeddings',
  image_generation: '/v1/images/generations',
  image_edit: '/v1/images/edits',
  speech: '/v1/audio/speech',
  transcription: '/v1/audio/transcriptions',
  video: '/v1/videos',
  moderation: '/v1/moderations',
  rerank: '/v1/rerank',
  ocr: '/v1/ocr',
};
