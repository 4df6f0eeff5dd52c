/**
 * What an inference handler writes its answer to: node:http's ServerResponse (calls that go
 * through Fastify or node:http) or the HTTP edge's own answer (edge/edge-answer.ts). Only what
 * the handlers use is here, so both can be handed to the same code.
 */
export interface AnswerStream {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  setHeader(name: string, value: string | number): unknown;
  writeHead(statusCode: number, headers: Record<string, string | number>): unknown;
  write(chunk: string | Buffer): boolean;
  end(chunk?: string | Buffer): unknown;
  addTrailers(headers: Record<string, string>): void;
  destroy(): unknown;
  on(event: 'close' | 'drain', listener: () => void): unknown;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  off(event: 'close' | 'drain', listener: () => void): unknown;
}
