/** A parsed RFC 2397 data URI. */
export interface DataUri {
  mediaType: string;
  bytes: Buffer;
}

/** Parses `data:[<mediatype>][;base64],<data>`; undefined when `reference` is not a data URI. */
export function parseDataUri(reference: string): DataUri | undefined {
  const match = /^data:([^,]*?),(.*)$/s.exec(reference);
  if (!match) return undefined;
  const parameters = match[1].split(';');
  const base64 = parameters[parameters.length - 1].toLowerCase() === 'base64';
  const mediaType = (parameters[0] || 'text/plain').toLowerCase();
  const bytes = base64 ? Buffer.from(match[2], 'base64') : Buffer.from(decodeURIComponent(match[2]), 'utf8');
  return { mediaType, bytes };
}
