import type { ChatMessage } from '../../protocol/chat.js';

/**
 * Readers for the canonical (OpenAI) chat content that every non-OpenAI translator needs: the text
 * of a message, its parts, and images given as data URIs or URLs.
 */
export type CanonicalPart =
  | { kind: 'text'; text: string }
  | { kind: 'image'; source: ImageSource };

export type ImageSource = { type: 'base64'; mediaType: string; data: string } | { type: 'url'; url: string };

/** `data:image/png;base64,AAAA` → base64 source; anything else is a URL. RFC 2397. */
export function imageSourceFromUrl(url: string): ImageSource {
  const match = /^data:([^;,]+)?((?:;[^;,]+)*?);base64,(.*)$/s.exec(url);
  if (match) return { type: 'base64', mediaType: match[1] ?? 'application/octet-stream', data: match[3] };
  return { type: 'url', url };
}

/** The parts of a message's content; unknown part types (audio, files) are dropped. */
export function contentParts(content: ChatMessage['content']): CanonicalPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ kind: 'text', text: content }];
  const parts: CanonicalPart[] = [];
  for (const part of content) {
    const record = part as Record<string, unknown>;
    if (part.type === 'text' && typeof record.text === 'string') parts.push({ kind: 'text', text: record.text });
    if (part.type === 'image_url') {
      const image = record.image_url as { url?: unknown } | string | undefined;
      const url = typeof image === 'string' ? image : image?.url;
      if (typeof url === 'string') parts.push({ kind: 'image', source: imageSourceFromUrl(url) });
    }
  }
  return parts;
}

/** The text of a message, its text parts joined by blank lines. */
export function messageText(content: ChatMessage['content']): string {
  return contentParts(content)
    .flatMap((part) => (part.kind === 'text' ? [part.text] : []))
    .join('\n\n');
}

/** Tool arguments arrive as a JSON string; upstreams that want an object get `{}` for unparsable text. */
export function parseToolArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** `stop` is a string or a list; upstreams want a list. */
export function stopSequences(stop: string | string[] | null | undefined): string[] | undefined {
  if (stop === null || stop === undefined) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  return list.length > 0 ? list : undefined;
}

/** The canonical max-token cap: the newer name wins. */
export function maxTokensOf(request: { max_tokens?: number | null; max_completion_tokens?: number | null }): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}
