import { OpenAI, type APIError, type APIPromise, type ClientOptions } from 'openai';
import type { Chat } from 'openai/resources/chat/chat';
import { gatewayRoot } from './gateway-root.js';
import { makeGwStatusError } from './gw-errors.js';
import { resolveGwOptions, type GwOptions } from './resolve-gw-options.js';
import { Channels } from './resources/channels.js';
import { Credits } from './resources/credits.js';
import { Guardrails } from './resources/guardrails.js';
import { GwChatCompletions } from './resources/gw-chat-completions.js';
import { GwCompletions } from './resources/gw-completions.js';
import { GwEmbeddings } from './resources/gw-embeddings.js';
import { Ocr } from './resources/ocr.js';
import { Pricing } from './resources/pricing.js';
import { Prompts } from './resources/prompts.js';
import { Rerank } from './resources/rerank.js';
import { GwVideos } from './resources/videos.js';
import { withMeta, type GwWithMeta } from './with-meta.js';

/** SDK areas gw does not serve (SPEC "Not available"); hidden from the Gw type so code cannot assume them. */
export type GwUnsupportedResource =
  | 'files'
  | 'fineTuning'
  | 'graders'
  | 'vectorStores'
  | 'webhooks'
  | 'beta'
  | 'batches'
  | 'uploads'
  | 'admin'
  | 'responses'
  | 'realtime'
  | 'conversations'
  | 'evals'
  | 'containers'
  | 'skills';

export type GwChat = Omit<Chat, 'completions'> & { completions: GwChatCompletions };

/**
 * The gw client: the `openai` SDK client (it is one at runtime: `gw instanceof OpenAI`) with gw's
 * resources, typed `gw_*` request fields, `.withMeta()` on gw-typed calls and the Gw…Error classes.
 */
export interface Gw extends Omit<OpenAI, GwUnsupportedResource | 'chat' | 'completions' | 'embeddings' | 'videos' | 'withOptions'> {
  chat: GwChat;
  completions: GwCompletions;
  embeddings: GwEmbeddings;
  /** gw's video jobs: create, retrieve, content (bytes). */
  videos: GwVideos;
  rerank: Rerank;
  ocr: Ocr;
  credits: Credits;
  pricing: Pricing;
  guardrails: Guardrails;
  prompts: Prompts;
  channels: Channels;
  /** The gateway root (baseURL without /v1), where /api/... and /gw/... live. */
  readonly rootURL: string;
  /** `{ data, meta, response }` for any call of this client, including the SDK's own resources. */
  withMeta<T>(promise: APIPromise<T>): Promise<GwWithMeta<T>>;
  /** This client typed as the SDK's `OpenAI`, for libraries that take one. */
  asOpenAI(): OpenAI;
  /** A new client with the same options, some overridden. */
  withOptions(options: Partial<GwOptions>): Gw;
}

class GwClient extends OpenAI {
  readonly rootURL: string;
  readonly rerank: Rerank;
  readonly ocr: Ocr;
  readonly credits: Credits;
  readonly pricing: Pricing;
  readonly guardrails: Guardrails;
  readonly prompts: Prompts;
  readonly channels: Channels;

  constructor(options: GwOptions = {}) {
    super(resolveGwOptions(options));
    this.rootURL = gatewayRoot(this.baseURL);
    this.chat.completions = new GwChatCompletions(this);
    this.completions = new GwCompletions(this);
    this.embeddings = new GwEmbeddings(this);
    // gw's video records differ from the SDK's Videos API, so the resource is replaced; the public Gw type says so.
    (this as unknown as { videos: GwVideos }).videos = new GwVideos(this);
    this.rerank = new Rerank(this);
    this.ocr = new Ocr(this);
    this.credits = new Credits(this);
    this.pricing = new Pricing(this);
    this.guardrails = new Guardrails(this);
    this.prompts = new Prompts(this);
    this.channels = new Channels(this);
  }

  /** Where the SDK turns a non-2xx response into an error: gw's codes become the Gw classes. */
  protected override makeStatusError(status: number, error: object, message: string | undefined, headers: Headers): APIError {
    return makeGwStatusError(status, error, message, headers);
  }

  withMeta<T>(promise: APIPromise<T>): Promise<GwWithMeta<T>> {
    return withMeta(promise);
  }

  asOpenAI(): OpenAI {
    return this;
  }
}

/** Constructs a Gw client: `new Gw()` reads GW_API_KEY and GW_BASE_URL; see GwOptions. */
export const Gw = GwClient as unknown as {
  new (options?: GwOptions): Gw;
  readonly prototype: Gw;
};

export type { ClientOptions };
