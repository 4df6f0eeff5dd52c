import type { Transporter } from 'nodemailer';
import type { Notifier, NotificationPayload } from './channel-types.js';
import { formatDetailValue } from './format-detail-value.js';

export interface EmailNotifierOptions {
  /** Server SMTP settings (config.smtpUrl), e.g. smtp://user:pass@mail.example.com:587; unset = email channels fail with a clear reason. */
  smtpUrl: string | undefined;
  from: string;
  timeoutMs: number;
}

/** Pure: subject and text body of the alert email. */
export function buildEmailMessage(payload: NotificationPayload): { subject: string; text: string } {
  const lines = [payload.message, '', `Severity: ${payload.severity}`, `Service: ${payload.service}`];
  const entries = Object.entries(payload.details);
  if (entries.length > 0) lines.push('', 'Details:', ...entries.map(([key, value]) => `  ${key}: ${formatDetailValue(value, 2000)}`));
  return { subject: payload.title, text: `${lines.join('\n')}\n` };
}

export function createEmailNotifier(options: EmailNotifierOptions): Notifier {
  // One transport per notifier, built on first use, so a server without SMTP never opens one (nor
  // loads the mail library).
  let transport: Transporter | undefined;
  const transportFor = async (smtpUrl: string): Promise<Transporter> => {
    const { createTransport } = await import('nodemailer');
    transport ??= createTransport({
      url: smtpUrl,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    } as Parameters<typeof createTransport>[0]);
    return transport;
  };
  return {
    async send(channel, payload) {
      if (channel.type !== 'email') throw new Error(`email notifier got a ${channel.type} channel`);
      const startedAt = performance.now();
      const elapsed = () => Math.round(performance.now() - startedAt);
      if (!options.smtpUrl) return { delivered: false, status: null, error: 'email is not configured on this server (set GW_SMTP_URL)', latencyMs: 0 };
      try {
        const { subject, text } = buildEmailMessage(payload);
        const info = await (await transportFor(options.smtpUrl)).sendMail({ from: options.from, to: channel.config.to, subject, text });
        const rejected = (info.rejected ?? []).map(String);
        if (rejected.length > 0) return { delivered: false, status: null, error: `recipients rejected: ${rejected.join(', ')}`, latencyMs: elapsed() };
        return { delivered: true, status: null, error: null, latencyMs: elapsed() };
      } catch (error) {
        return { delivered: false, status: null, error: `smtp: ${error instanceof Error ? error.message : String(error)}`, latencyMs: elapsed() };
      }
    },
  };
}
