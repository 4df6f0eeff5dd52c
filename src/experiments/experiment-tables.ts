/** Row types of the A/B-test tables (portable conventions in db/schema.ts). */
export interface ExperimentsTable {
  id: string;
  org_id: string;
  name: string;
  /** 'model' (target = a public model id) or 'template' (target = a prompt template id). */
  target_kind: string;
  target: string;
  /** JSON array of variants {name, weight, model?, template_version?, parameters?}. */
  variants: string;
  /** 'active' or 'paused'. */
  status: string;
  created_at: number;
  updated_at: number;
}

/** Running totals per variant; flushed from memory in batches as upserts that add. */
export interface ExperimentStatsTable {
  experiment_id: string;
  variant: string;
  calls: number;
  errors: number;
  latency_ms_total: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_nanos: number;
}

export interface ExperimentTables {
  experiments: ExperimentsTable;
  experiment_stats: ExperimentStatsTable;
}
