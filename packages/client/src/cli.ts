import { parseArgs } from 'node:util';
import { APIError } from 'openai';
import { Gw } from './gw.js';
import { GwMissingApiKeyError } from './resolve-gw-options.js';
import type { GwResponseMeta } from './response-meta.js';

/** Where the CLI writes, and the environment it reads GW_API_KEY / GW_BASE_URL / GW_MODEL from. */
export interface ClientCliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

const USAGE = `usage:
  gw chat "<prompt>" [--model <id>] [--system <text>] [--stream]
  gw models
  gw credits

environment: GW_API_KEY (required), GW_BASE_URL (default http://127.0.0.1:4000/v1), GW_MODEL (default model for chat)
`;

/**
 * The `gw chat|models|credits` commands, for trying the gateway from a shell. Answers the exit
 * code: 0 on success, 1 when the gateway answered an error, 2 for a usage or configuration error.
 */
export async function runClientCli(argv: readonly string[], io: ClientCliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  let gw: Gw;
  try {
    gw = new Gw({ apiKey: io.env['GW_API_KEY'], baseURL: io.env['GW_BASE_URL'], maxRetries: 0 });
  } catch (error) {
    if (error instanceof GwMissingApiKeyError) {
      io.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  try {
    switch (command) {
      case 'chat':
        return await chat(gw, rest, io);
      case 'models':
        return await models(gw, io);
      case 'credits':
        return await credits(gw, io);
      default:
        io.stderr.write(`gw: unknown command "${command}"\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof APIError) {
      const code = error.code ? ` [${error.code}]` : '';
      const requestId = error.requestID ? ` (request ${error.requestID})` : '';
      io.stderr.write(`gw: ${error.message}${code}${requestId}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`gw: ${error.message}\n${USAGE}`);
      return 2;
    }
    throw error;
  }
}

class UsageError extends Error {}

async function chat(gw: Gw, args: string[], io: ClientCliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { model: { type: 'string', short: 'm' }, system: { type: 'string' }, stream: { type: 'boolean' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const prompt = parsed.positionals.join(' ').trim();
  if (!prompt) throw new UsageError('chat needs a prompt');
  const model = parsed.values.model ?? io.env['GW_MODEL'] ?? (await firstModel(gw));
  const messages = [
    ...(parsed.values.system ? [{ role: 'system' as const, content: parsed.values.system }] : []),
    { role: 'user' as const, content: prompt },
  ];
  if (parsed.values.stream) {
    const { data: stream } = await gw.chat.completions.create({ model, messages, stream: true }).withMeta();
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta?.content;
      if (text) io.stdout.write(text);
    }
    io.stdout.write('\n');
    io.stderr.write(describeMeta(model, stream.meta));
    return 0;
  }
  const { data, meta } = await gw.chat.completions.create({ model, messages }).withMeta();
  io.stdout.write(`${data.choices[0]?.message?.content ?? ''}\n`);
  io.stderr.write(describeMeta(model, meta));
  return 0;
}

async function models(gw: Gw, io: ClientCliIo): Promise<number> {
  const page = await gw.models.list();
  for (const model of page.data) io.stdout.write(`${model.id}\n`);
  return 0;
}

async function credits(gw: Gw, io: ClientCliIo): Promise<number> {
  const balance = await gw.credits.balance();
  io.stdout.write(`${JSON.stringify(balance, null, 2)}\n`);
  return 0;
}

async function firstModel(gw: Gw): Promise<string> {
  const page = await gw.models.list();
  const first = page.data[0]?.id;
  if (!first) throw new UsageError('no models are available to this key; pass --model');
  return first;
}

function describeMeta(model: string, meta: GwResponseMeta): string {
  const parts = [`model ${model}`];
  if (meta.costUsd !== undefined) parts.push(`cost $${meta.costUsd}`);
  if (meta.latencyMs !== null) parts.push(`${meta.latencyMs} ms`);
  if (meta.cache) parts.push(`cache ${meta.cache}`);
  if (meta.requestId) parts.push(`request ${meta.requestId}`);
  return `[${parts.join(' · ')}]\n`;
}
