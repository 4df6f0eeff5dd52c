import type { DeploymentTarget } from '../provider.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** `{base}{path}` for OpenAI's API; the base includes `/v1`, as the presets do. */
export function openaiUrl(target: DeploymentTarget, path: string): string {
  return `${(target.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, '')}${path}`;
}

export function openaiHeaders(target: DeploymentTarget, contentType?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (contentType) headers['content-type'] = contentType;
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  if (target.settings.organization) headers['openai-organization'] = target.settings.organization;
  if (target.settings.project) headers['openai-project'] = target.settings.project;
  return headers;
}
