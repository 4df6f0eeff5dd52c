import type { OpenAI } from 'openai';
import { Completions } from 'openai/resources/completions';
import type {
  Completion,
  CompletionCreateParamsBase,
  CompletionCreateParamsNonStreaming,
  CompletionCreateParamsStreaming,
} from 'openai/resources/completions';
import { meteredStream, type GwStream } from '../gw-stream.js';
import type { GwCacheExtras } from '../request-extras.js';
import { readResponseMeta } from '../response-meta.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export type GwCompletionCreateParamsNonStreaming = CompletionCreateParamsNonStreaming & GwCacheExtras;
export type GwCompletionCreateParamsStreaming = CompletionCreateParamsStreaming & GwCacheExtras;
export type GwCompletionCreateParams = CompletionCreateParamsBase & GwCacheExtras;

/** The SDK's text completions with `gw_cache` typed and `.withMeta()` on every call. */
export class GwCompletions extends Completions {
  override create(body: GwCompletionCreateParamsNonStreaming, options?: OpenAI.RequestOptions): GwAPIPromise<Completion>;
  override create(body: GwCompletionCreateParamsStreaming, options?: OpenAI.RequestOptions): GwAPIPromise<GwStream<Completion>>;
  override create(
    body: GwCompletionCreateParams,
    options?: OpenAI.RequestOptions,
  ): GwAPIPromise<GwStream<Completion> | Completion>;
  override create(
    body: GwCompletionCreateParams,
    options?: OpenAI.RequestOptions,
  ): GwAPIPromise<GwStream<Completion> | Completion> {
    if (!body.stream) return withMetaMethod(super.create(body as CompletionCreateParamsNonStreaming, options));
    const streamed = super
      .create(body as CompletionCreateParamsStreaming, options)
      ._thenUnwrap((stream, props) =>
        meteredStream(stream, readResponseMeta(props.response.headers), { hideUsageChunk: false }, this._client),
      );
    return withMetaMethod(streamed);
  }
}
