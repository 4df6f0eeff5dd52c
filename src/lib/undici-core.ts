import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/**
 * The parts of undici the gateway uses (Agent, its error classes, and `request` on a dispatcher),
 * loaded from undici's own files instead of its index. The index also loads fetch, WebSocket,
 * EventSource, the cache and mock layers and every interceptor: 5.2 MB of heap in every gateway
 * against 1.8 MB for these three (measured after a full collection, one module loaded at a time).
 *
 * Those file paths are not undici's published interface, so if an undici release moves them the
 * whole package is loaded instead: slower to start and heavier, never broken
 * (src/lib/undici-core.test.ts checks which way it went for the installed version).
 */

const require = createRequire(import.meta.url);

type RequestOptions = Undici.Dispatcher.RequestOptions;

interface UndiciCore {
  Agent: typeof Undici.Agent;
  errors: typeof Undici.errors;
  /** undici's `request` bound to a dispatcher: Dispatcher#request without the index's prototype patch. */
  request(dispatcher: Undici.Dispatcher, options: RequestOptions): Promise<Undici.Dispatcher.ResponseData>;
  /** 'parts' when the three files were loaded on their own, 'package' on the fallback. */
  loadedFrom: 'parts' | 'package';
}

function loadCore(): UndiciCore {
  try {
    const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
    const errors = require('undici/lib/core/errors.js') as typeof Undici.errors;
    const apiRequest = require('undici/lib/api/api-request.js') as (this: Undici.Dispatcher, options: RequestOptions) => Promise<Undici.Dispatcher.ResponseData>;
    if (typeof Agent !== 'function' || typeof apiRequest !== 'function' || typeof errors?.UndiciError !== 'function') {
      throw new Error('unexpected undici layout');
    }
    return { Agent, errors, request: (dispatcher, options) => apiRequest.call(dispatcher, options), loadedFrom: 'parts' };
  } catch {
    const undici = require('undici') as typeof Undici;
    return { Agent: undici.Agent, errors: undici.errors, request: (dispatcher, options) => dispatcher.request(options), loadedFrom: 'package' };
  }
}

export const undiciCore: UndiciCore = loadCore();
