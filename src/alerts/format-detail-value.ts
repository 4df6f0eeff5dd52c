import { canonicalJson } from '../lib/canonical-json.js';

/** Renders one details value for human-facing channels (Slack, Teams, Jira, email). */
export function formatDetailValue(value: unknown, maxLength = 500): string {
  const text = typeof value === 'string' ? value : canonicalJson(value);
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}
