export { Gw, type GwChat, type GwUnsupportedResource } from './gw.js';
export { DEFAULT_GW_BASE_URL, GwMissingApiKeyError, resolveGwOptions, type GwOptions } from './resolve-gw-options.js';
export {
  GwCreditError,
  GwGuardrailBlockedError,
  GwRateLimitError,
  GwServiceError,
  makeGwStatusError,
  type GwErrorBody,
} from './gw-errors.js';
export { readResponseMeta, readRetryAfter, type GwRateLimitMeta, type GwResponseMeta } from './response-meta.js';
export { GwStream } from './gw-stream.js';
export { withMeta, type GwAPIPromise, type GwWithMeta } from './with-meta.js';
export { gatewayRoot } from './gateway-root.js';
export { nanosToMicroUsd, nanosToUsd, parseUsdNanos } from './usd-amount.js';
export type { GwCacheExtras, GwChatExtras } from './request-extras.js';
export {
  GwChatCompletions,
  type GwChatCompletionCreateParams,
  type GwChatCompletionCreateParamsNonStreaming,
  type GwChatCompletionCreateParamsStreaming,
} from './resources/gw-chat-completions.js';
export {
  GwCompletions,
  type GwCompletionCreateParams,
  type GwCompletionCreateParamsNonStreaming,
  type GwCompletionCreateParamsStreaming,
} from './resources/gw-completions.js';
export { GwEmbeddings, type GwEmbeddingCreateParams } from './resources/gw-embeddings.js';
export { Rerank, type RerankCreateParams, type RerankResponse } from './resources/rerank.js';
export { Ocr, type OcrCreateParams, type OcrResponse } from './resources/ocr.js';
export { GwVideos, type GwVideo, type GwVideoCreateParams, type GwVideoStatus } from './resources/videos.js';
export {
  Credits,
  type CreditBalance,
  type CreditHistory,
  type CreditHistoryEntry,
  type CreditHistoryParams,
} from './resources/credits.js';
export { Pricing, type ModelPrice, type ModelPricing } from './resources/pricing.js';
export {
  Guardrails,
  type Guardrail,
  type GuardrailInfo,
  type GuardrailKind,
  type GuardrailList,
  type GuardrailLogEntry,
  type GuardrailLogs,
} from './resources/guardrails.js';
export {
  Prompts,
  type PromptDiff,
  type PromptDiffParams,
  type PromptInfo,
  type PromptList,
  type PromptTemplate,
  type PromptVersion,
} from './resources/prompts.js';
export {
  Channels,
  type AlertChannel,
  type AlertChannelCreateParams,
  type AlertChannelTestResult,
  type AlertChannelType,
} from './resources/channels.js';
// The SDK's error classes, so one import serves both kinds of catch block.
export {
  APIConnectionError,
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  OpenAIError,
  PermissionDeniedError,
  RateLimitError,
} from 'openai';
