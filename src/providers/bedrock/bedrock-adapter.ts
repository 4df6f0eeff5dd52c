import type { ChatRequest } from '../../protocol/chat.js';
import { signRequest } from '../../lib/aws-sigv4.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { OperationTranslator, ProviderAdapter, TranslationContext, UpstreamRequest } from '../http/provider-adapter.js';
import { toConverseBody } from './bedrock-converse-request.js';
import { parseConverseResponse } from './bedrock-converse-response.js';
import { parseBedrockError } from './bedrock-error.js';
import { createBedrockStreamTranslator } from './bedrock-stream-translator.js';

export interface BedrockAdapterOptions {
  /** The signing clock; tests pass a fixed one. */
  now?: () => Date;
}

/**
 * AWS Bedrock Converse / ConverseStream. Deployment settings: `region` (default us-east-1) and
 * either `accessKeyId` + `secretAccessKey` (+ `sessionToken`) for SigV4, or the deployment's apiKey
 * as a Bedrock API key (bearer token). A baseUrl replaces the regional endpoint (VPC endpoints, tests).
 */
export function createBedrockAdapter(options: BedrockAdapterOptions = {}): ProviderAdapter {
  const now = options.now ?? (() => new Date());

  const buildRequest = (request: ChatRequest, context: TranslationContext & { stream: boolean }): UpstreamRequest => {
    const { settings, baseUrl, upstreamModel, apiKey } = context.target;
    const region = settings.region ?? 'us-east-1';
    const base = (baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`).replace(/\/+$/, '');
    const unsigned: UpstreamRequest = {
      method: 'POST',
      url: `${base}/model/${encodeURIComponent(upstreamModel)}/${context.stream ? 'converse-stream' : 'converse'}`,
      headers: { 'content-type': 'application/json', accept: context.stream ? 'application/vnd.amazon.eventstream' : 'application/json' },
      body: JSON.stringify(toConverseBody(request)),
    };
    if (settings.accessKeyId && settings.secretAccessKey) {
      const credentials = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, sessionToken: settings.sessionToken };
      return signRequest(unsigned, credentials, { region, service: 'bedrock' }, now());
    }
    if (apiKey) return { ...unsigned, headers: { ...unsigned.headers, authorization: `Bearer ${apiKey}` } };
    throw new GatewayError('upstream_authentication', 'The bedrock deployment has no credentials configured', { provider: 'bedrock' });
  };

  const chat: OperationTranslator<ChatRequest> = {
    buildRequest,
    parseResponse: (body, context) => parseConverseResponse(body, context),
    createStreamTranslator: createBedrockStreamTranslator,
  };
  return { id: 'bedrock', streamFraming: 'aws-eventstream', translators: { chat }, parseError: parseBedrockError };
}
