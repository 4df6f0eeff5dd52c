import type { OpenAI } from 'openai';
import { Completions } from 'openai/resources/chat/completions';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';
import { meteredStream, type GwStream } from '../gw-stream.js';
import type { GwChatExtras } from '../request-extras.js';
import { readResponseMeta } from '../response-meta.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export type GwChatCompletionCreateParamsNonStreaming = ChatCompletionCreateParamsNonStreaming & GwChatExtras;
export type GwChatCompletionCreateParamsStreaming = ChatCompletionCreateParamsStreaming & GwChatExtras;
export type GwChatCompletionCreateParams = ChatCompletionCreateParamsBase & GwChatExtras;

/**
 * The SDK's chat completions with gw's typed `gw_*` fields, `.withMeta()` on every call, and
 * streams that report their cost. A stream that did not say whether it wants usage gets
 * `stream_options.include_usage` so gw can send the cost on the usage chunk; that chunk is then
 * kept from the caller, who sees the same chunks as without this library.
 */
export class GwChatCompletions extends Completions {
  override create(body: GwChatCompletionCreateParamsNonStreaming, options?: OpenAI.RequestOptions): GwAPIPromise<ChatCompletion>;
  override create(
    body: GwChatCompletionCreateParamsStreaming,
    options?: OpenAI.RequestOptions,
  ): GwAPIPromise<GwStream<ChatCompletionChunk>>;
  override create(
    body: GwChatCompletionCreateParams,
    options?: OpenAI.RequestOptions,
  ): GwAPIPromise<GwStream<ChatCompletionChunk> | ChatCompletion>;
  override create(
    body: GwChatCompletionCreateParams,
    options?: OpenAI.RequestOptions,
  ): GwAPIPromise<GwStream<ChatCompletionChunk> | ChatCompletion> {
    if (!body.stream) {
      return withMetaMethod(super.create(body as ChatCompletionCreateParamsNonStreaming, options));
    }
    const askForUsage = body.stream_options?.include_usage === undefined || body.stream_options.include_usage === null;
    const sent: ChatCompletionCreateParamsStreaming = askForUsage
      ? { ...(body as ChatCompletionCreateParamsStreaming), stream_options: { ...body.stream_options, include_usage: true } }
      : (body as ChatCompletionCreateParamsStreaming);
    const streamed = super
      .create(sent, options)
      ._thenUnwrap((stream, props) =>
        meteredStream(stream, readResponseMeta(props.response.headers), { hideUsageChunk: askForUsage }, this._client),
      );
    return withMetaMethod(streamed);
  }
}
