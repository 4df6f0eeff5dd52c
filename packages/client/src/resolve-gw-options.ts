import { OpenAIError, type ClientOptions } from 'openai';

export const DEFAULT_GW_BASE_URL = 'http://127.0.0.1:4000/v1';

/** The SDK's client options, with apiKey and baseURL defaulting to GW_API_KEY and GW_BASE_URL. */
export interface GwOptions extends Omit<ClientOptions, 'apiKey' | 'baseURL'> {
  /** Defaults to the GW_API_KEY environment variable; one of the two is required. */
  apiKey?: string | undefined;
  /** Defaults to GW_BASE_URL, then http://127.0.0.1:4000/v1. */
  baseURL?: string | undefined;
}

/** Thrown by `new Gw()` when neither `apiKey` nor GW_API_KEY gives a key. */
export class GwMissingApiKeyError extends OpenAIError {
  constructor() {
    super('gw: no API key. Pass `new Gw({ apiKey })` or set the GW_API_KEY environment variable to your sk-gw-... key.');
    this.name = 'GwMissingApiKeyError';
  }
}

/**
 * Resolves the options handed to the SDK. OpenAI's own variables (OPENAI_API_KEY, OPENAI_BASE_URL,
 * OPENAI_ORG_ID, OPENAI_PROJECT_ID) are not consulted: a gw client talks to gw only.
 */
export function resolveGwOptions(options: GwOptions, env: Record<string, string | undefined> = processEnv()): ClientOptions {
  const apiKey = nonEmpty(options.apiKey) ?? nonEmpty(env['GW_API_KEY']);
  if (!apiKey) throw new GwMissingApiKeyError();
  const baseURL = nonEmpty(options.baseURL) ?? nonEmpty(env['GW_BASE_URL']) ?? DEFAULT_GW_BASE_URL;
  return {
    ...options,
    apiKey,
    baseURL,
    organization: options.organization ?? null,
    project: options.project ?? null,
    webhookSecret: options.webhookSecret ?? null,
  };
}

function nonEmpty(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function processEnv(): Record<string, string | undefined> {
  return typeof process === 'undefined' ? {} : process.env;
}
