import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ConfigOverrides } from '../../src/config/load-config.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';

/** One public model routed to one deployment at a fake upstream. */
export interface RoutedModel {
  id: string;
  provider: string;
  upstreamModel: string;
  baseUrl: string;
  /** Environment variable holding the upstream key (given in `environment`). */
  apiKeyEnv?: string;
  settings?: Record<string, string>;
  pricing?: Record<string, unknown>;
}

export interface ProviderGateway {
  running: RunningGateway;
  client: OpenAI;
  /** Raw JSON POST to `/v1{path}` with the gateway key. */
  post(path: string, body: unknown): Promise<{ status: number; headers: Headers; json: any }>;
  get(path: string): Promise<Response>;
  close(): Promise<void>;
}

/** Prices for every unit a test call may bill, so the meter prices (and never refuses) each call. */
export const TEST_PRICING = {
  inputPerMillion: '1',
  outputPerMillion: '2',
  perImage: { default: '0.04' },
  speechPerMillionCharacters: '15',
  transcriptionPerMinute: '0.006',
  perSearchUnit: '0.002',
  perOcrPage: '0.001',
  perVideoSecond: '0.1',
};

/** The function tool the tool-calling scenarios offer. */
export const WEATHER_TOOL: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/**
 * A gateway whose GW_CONFIG routes each public model id to a fake upstream, with the bootstrap
 * org on the enterprise tier so a file of tests is not throttled by the tier-1 TPS limit.
 */
export async function startProviderGateway(
  models: RoutedModel[],
  environment: Record<string, string>,
  config: ConfigOverrides = {},
): Promise<ProviderGateway> {
  const configFile = join(tempDirectory(), 'gw.yaml');
  const file = {
    models: models.map((model) => ({
      id: model.id,
      deployments: [
        {
          provider: model.provider,
          upstream_model: model.upstreamModel,
          base_url: model.baseUrl,
          ...(model.apiKeyEnv ? { api_key_env: model.apiKeyEnv } : {}),
          ...(model.settings ? { settings: model.settings } : {}),
          pricing: model.pricing ?? TEST_PRICING,
        },
      ],
    })),
  };
  // YAML reads JSON.
  writeFileSync(configFile, JSON.stringify(file, null, 2));
  const running = await startGateway({ config: { configFile, ...config }, environment });
  // allow_unpriced_models: the reservation treats a model priced only by its deployment as unpriced (reported upstream of these tests).
  const upgraded = await adminRequest(running, 'PATCH', `/api/admin/orgs/${running.orgId}`, {
    tier: 'enterprise',
    settings: { allow_unpriced_models: true },
  });
  assert.equal(upgraded.status, 200, JSON.stringify(upgraded.body));
  const client = new OpenAI({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
  const authorization = { authorization: `Bearer ${running.apiKey}` };
  return {
    running,
    client,
    async post(path, body) {
      const response = await fetch(`${running.baseURL}${path}`, {
        method: 'POST',
        headers: { ...authorization, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // Kept as text for the assertion message.
      }
      return { status: response.status, headers: response.headers, json };
    },
    get: (path) => fetch(`${running.baseURL}${path}`, { headers: authorization }),
    close: () => running.close(),
  };
}

/** The spec's error body, with nothing of the upstream credential in it. */
export function assertErrorBody(body: unknown, status: number, actualStatus: number, secrets: string[]): void {
  const text = JSON.stringify(body);
  assert.equal(actualStatus, status, text);
  const error = (body as { error?: { message?: unknown; type?: unknown; code?: unknown } }).error;
  assert.equal(typeof error?.message, 'string', text);
  assert.equal(typeof error?.type, 'string', text);
  assert.equal(typeof error?.code, 'string', text);
  for (const secret of secrets) assert.ok(!text.includes(secret), `the error body leaks ${secret}: ${text}`);
}

/** x-gw-request-cost is a non-negative USD decimal. */
export function assertCostHeader(headers: Headers): number {
  const value = headers.get('x-gw-request-cost');
  assert.ok(value !== null, 'x-gw-request-cost is present');
  const cost = Number(value);
  assert.ok(Number.isFinite(cost) && cost >= 0, `x-gw-request-cost ${value}`);
  return cost;
}
