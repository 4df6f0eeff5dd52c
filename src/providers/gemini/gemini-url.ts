export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

/** `{base}/v1beta/models/{model}:{method}`; a base that already names the API version keeps it. */
export function geminiModelUrl(baseUrl: string | undefined, upstreamModel: string, method: string): string {
  const base = (baseUrl ?? GEMINI_BASE_URL).replace(/\/+$/, '');
  const versioned = /\/v1(?:beta|alpha)?\d*$/.test(base) ? base : `${base}/v1beta`;
  return `${versioned}/${geminiModelName(upstreamModel)}:${method}`;
}

/** Gemini model resource names are `models/{id}`; deployments may give either form. */
export function geminiModelName(upstreamModel: string): string {
  return upstreamModel.startsWith('models/') ? upstreamModel : `models/${upstreamModel}`;
}
