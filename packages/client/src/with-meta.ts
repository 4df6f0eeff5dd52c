import type { APIPromise } from 'openai';
import { GwStream } from './gw-stream.js';
import { readResponseMeta, type GwResponseMeta } from './response-meta.js';

/** A call's parsed result together with gw's metadata and the raw Response. */
export interface GwWithMeta<T> {
  data: T;
  meta: GwResponseMeta;
  response: Response;
}

/** The SDK's APIPromise plus `.withMeta()`; returned by the gw-typed resources. */
export type GwAPIPromise<T> = APIPromise<T> & {
  /** Resolves to `{ data, meta, response }`; for a stream, `meta` is the stream's own (cost filled in at the end). */
  withMeta(): Promise<GwWithMeta<T>>;
};

/**
 * Reads gw's metadata for any call made through the client, including the SDK's own resources
 * (images, audio, models…): `const { data, meta } = await withMeta(gw.models.list())`.
 */
export async function withMeta<T>(promise: APIPromise<T>): Promise<GwWithMeta<T>> {
  const { data, response } = await promise.withResponse();
  const meta = data instanceof GwStream ? (data.meta as GwResponseMeta) : readResponseMeta(response.headers);
  return { data, meta, response };
}

/** Gives an APIPromise its `.withMeta()` method. */
export function withMetaMethod<T>(promise: APIPromise<T>): GwAPIPromise<T> {
  return Object.assign(promise, { withMeta: () => withMeta(promise) });
}
