import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw RFC 5322 message. */
  raw: string;
}

export interface SmtpInbox {
  url: string;
  messages: ReceivedMail[];
  waitFor(count: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** A local SMTP server on 127.0.0.1 (no TLS, no auth) that keeps every message it accepts. */
export async function startSmtpInbox(): Promise<SmtpInbox> {
  const messages: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        for (const waiter of waiters.splice(0)) waiter();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(count) {
      while (messages.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
      return messages;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
