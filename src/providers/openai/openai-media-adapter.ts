import type { ProviderAdapter } from '../http/provider-adapter.js';
import { parseOpenAIError } from '../http/upstream-error.js';
import { openaiSpeechTranslator, openaiTranscriptionTranslator } from './openai-audio-translators.js';
import { openaiImageEditTranslator, openaiImageGenerationTranslator } from './openai-image-translators.js';
import { openaiModerationTranslator } from './openai-moderation-translator.js';
import { openaiVideoTranslator } from './openai-video-translator.js';

/**
 * OpenAI's non-chat endpoints: images, speech, transcriptions, moderations, videos. Chat,
 * completions and embeddings go through the compatible adapter with the `openai` preset.
 */
export function createOpenAIMediaAdapter(id = 'openai'): ProviderAdapter {
  return {
    id,
    streamFraming: 'sse',
    translators: {
      image_generation: openaiImageGenerationTranslator,
      image_edit: openaiImageEditTranslator,
      speech: openaiSpeechTranslator,
      transcription: openaiTranscriptionTranslator,
      moderation: openaiModerationTranslator,
      video: openaiVideoTranslator,
    },
    parseError: (status, body, headers) => parseOpenAIError(id, status, body, headers),
  };
}
