import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/** A valid 1×1 PNG. */
export const FAKE_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A valid, silent, 8 kHz mono 16-bit WAV of 10 ms. */
export function fakeWav(): Buffer {
  const samples = 80;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples * 2, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples * 2, 40);
  return Buffer.concat([header, Buffer.alloc(samples * 2)]);
}

const SPEECH: Record<string, { contentType: string; bytes: () => Buffer }> = {
  mp3: { contentType: 'audio/mpeg', bytes: () => Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1') },
  wav: { contentType: 'audio/wav', bytes: fakeWav },
  opus: { contentType: 'audio/ogg', bytes: () => Buffer.from('OggS\u0000\u0002', 'latin1') },
};

/** Field names of a multipart body, in order (enough for a fake to answer and a test to check). */
export function multipartFieldNames(body: Buffer): string[] {
  return [...body.toString('latin1').matchAll(/Content-Disposition: form-data; name="([^"]+)"/g)].map((match) => match[1]);
}

/**
 * OpenAI media fake: images (generations, edits), audio (speech, transcriptions), moderations,
 * videos (create; the first poll says in_progress, the next completed; content is MP4-like bytes).
 */
export function startFakeOpenAIMedia(): Promise<FakeUpstream> {
  const polls = new Map<string, number>();
  let nextVideo = 1;
  return startFakeUpstream((request) => {
    if (!String(request.headers.authorization ?? '').startsWith('Bearer ')) {
      return { status: 401, body: { error: { message: 'You didn\'t provide an API key.', type: 'invalid_request_error', code: null } } };
    }
    const body = (request.json ?? {}) as Record<string, unknown>;
    const created = 1_700_000_000;
    if (request.url === '/v1/images/generations' || request.url === '/v1/images/edits') {
      const fields = request.url.endsWith('edits') ? multipartFieldNames(request.body) : [];
      if (request.url.endsWith('edits') && !fields.includes('image')) return { status: 400, body: { error: { message: 'image is required', type: 'invalid_request_error' } } };
      const count = Number(body.n ?? 1);
      return {
        body: {
          created,
          data: Array.from({ length: count }, () => ({ b64_json: FAKE_PNG_BASE64 })),
          size: (body.size as string | undefined) ?? '1024x1024',
          quality: (body.quality as string | undefined) ?? 'medium',
          usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 },
        },
      };
    }
    if (request.url === '/v1/audio/speech') {
      const format = SPEECH[String(body.response_format ?? 'mp3')] ?? SPEECH.mp3;
      return { headers: { 'content-type': format.contentType }, body: format.bytes() };
    }
    if (request.url === '/v1/audio/transcriptions') {
      const filename = /filename="([^"]*)"/.exec(request.body.toString('latin1'))?.[1] ?? 'audio';
      return { body: { text: `Transcript of ${filename}.`, usage: { type: 'duration', seconds: 2 } } };
    }
    if (request.url === '/v1/moderations') {
      const inputs = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input ?? '')];
      return {
        body: {
          id: 'modr-fake',
          model: 'omni-moderation-latest',
          results: inputs.map((input) => {
            const violent = /\bkill\b/i.test(input);
            return { flagged: violent, categories: { violence: violent, harassment: false }, category_scores: { violence: violent ? 0.97 : 0.01, harassment: 0.01 } };
          }),
        },
      };
    }
    if (request.url === '/v1/videos' && request.method === 'POST') {
      const id = `video_fake_${nextVideo++}`;
      polls.set(id, 0);
      return { body: { id, object: 'video', model: body.model, status: 'queued', progress: 0, created_at: created, seconds: body.seconds ?? '4', size: body.size ?? '720x1280' } };
    }
    const video = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(request.url);
    if (video && request.method === 'GET' && polls.has(video[1])) {
      if (video[2]) return { headers: { 'content-type': 'video/mp4' }, body: Buffer.from('\u0000\u0000\u0000\u0018ftypmp42', 'latin1') };
      const count = (polls.get(video[1]) ?? 0) + 1;
      polls.set(video[1], count);
      const done = count >= 2;
      return {
        body: {
          id: video[1], object: 'video', status: done ? 'completed' : 'in_progress', progress: done ? 100 : 50,
          created_at: created, completed_at: done ? created + 10 : null, seconds: '4', size: '720x1280',
        },
      };
    }
    return { status: 404, body: { error: { message: `Unknown path ${request.url}`, type: 'invalid_request_error' } } };
  });
}
