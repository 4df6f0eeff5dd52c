/** Row types of the guardrail tables (see db/schema.ts for the portable column conventions). */
export interface GuardrailsTable {
  id: string;
  org_id: string;
  name: string;
  kind: string;
  stage: string;
  action: string;
  enabled_by_default: number;
  config: string;
  created_at: number;
  updated_at: number;
}

export interface GuardrailLogsTable {
  id: string;
  org_id: string;
  guardrail_id: string;
  guardrail_name: string;
  kind: string;
  stage: string;
  action: string;
  request_id: string;
  key_id: string | null;
  key_alias: string | null;
  model: string | null;
  /** JSON list of finding types (never the matched content). */
  finding_types: string;
  reason: string | null;
  created_at: number;
}

export interface GuardrailTables {
  guardrails: GuardrailsTable;
  guardrail_logs: GuardrailLogsTable;
}
