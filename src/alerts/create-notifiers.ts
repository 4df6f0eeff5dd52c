import type { GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { Notifiers } from './channel-types.js';
import { createEmailNotifier, type EmailNotifierOptions } from './email-notifier.js';
import { createJiraNotifier } from './jira-notifier.js';
import { createSlackNotifier } from './slack-notifier.js';
import { createTeamsNotifier } from './teams-notifier.js';
import { createWebhookNotifier } from './webhook-notifier.js';

/** One notifier per channel type; the HTTP-based ones share the SSRF-guarded client and its rules. */
export function createNotifiers(options: { http: GuardedHttpClient; email: EmailNotifierOptions }): Notifiers {
  return {
    webhook: createWebhookNotifier(options.http),
    email: createEmailNotifier(options.email),
    slack: createSlackNotifier(options.http),
    teams: createTeamsNotifier(options.http),
    jira: createJiraNotifier(options.http),
  };
}
