import type { GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { JiraConfig, Notifier, NotificationPayload } from './channel-types.js';
import { formatDetailValue } from './format-detail-value.js';
import { postForDelivery } from './http-delivery-result.js';

/** Jira rejects summaries longer than 255 characters. */
const MAX_SUMMARY_LENGTH = 255;

function paragraph(text: string, strong = false): Record<string, unknown> {
  return { type: 'paragraph', content: [{ type: 'text', text, ...(strong ? { marks: [{ type: 'strong' }] } : {}) }] };
}

/** Pure: the URL of Jira Cloud's create-issue call, keeping any context path of the site URL. */
export function jiraIssueUrl(config: JiraConfig): string {
  return `${config.site_url.replace(/\/+$/, '')}/rest/api/3/issue`;
}

/**
 * Pure: the body of `POST /rest/api/3/issue`
 * (https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-post);
 * the description is an Atlassian Document Format document.
 */
export function buildJiraIssue(config: JiraConfig, payload: NotificationPayload): Record<string, unknown> {
  const detailItems = Object.entries(payload.details).map(([key, value]) => ({
    type: 'listItem',
    content: [paragraph(`${key}: ${formatDetailValue(value)}`)],
  }));
  const content: Record<string, unknown>[] = [paragraph(payload.message), paragraph(`Severity: ${payload.severity}`, true), paragraph(`Service: ${payload.service}`)];
  if (detailItems.length > 0) content.push({ type: 'bulletList', content: detailItems });
  return {
    fields: {
      project: { key: config.project_key },
      issuetype: { name: config.issue_type },
      summary: payload.title.slice(0, MAX_SUMMARY_LENGTH),
      description: { type: 'doc', version: 1, content },
      labels: ['gw', `severity-${payload.severity.toLowerCase()}`],
    },
  };
}

export function createJiraNotifier(http: GuardedHttpClient): Notifier {
  return {
    async send(channel, payload) {
      if (channel.type !== 'jira') throw new Error(`jira notifier got a ${channel.type} channel`);
      const { config } = channel;
      // Jira Cloud API tokens authenticate with HTTP basic auth of the account email and the token.
      const authorization = `Basic ${Buffer.from(`${config.email}:${config.api_token}`).toString('base64')}`;
      return postForDelivery(http, jiraIssueUrl(config), JSON.stringify(buildJiraIssue(config, payload)), { authorization, accept: 'application/json' });
    },
  };
}
