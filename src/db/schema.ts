/**
 * Kysely table types. Conventions, portable across SQLite and Postgres: ids are text (UUIDs),
 * times are epoch milliseconds in bigint columns, money is integer nano-USD in bigint columns,
 * booleans are integers 0/1, and structured values are JSON text.
 */
import type { FeatureTables } from './feature-tables.js';

export interface SettingsTable {
  name: string;
  value: string;
}

export interface OrgsTable {
  id: string;
  name: string;
  tier: string;
  custom_limits: string;
  enabled_models: string | null;
  budget: string | null;
  settings: string;
  created_at: number;
}

export interface TeamsTable {
  id: string;
  org_id: string;
  name: string;
  allowed_models: string | null;
  budget: string | null;
  created_at: number;
}

export interface VirtualKeysTable {
  id: string;
  org_id: string;
  team_id: string | null;
  name: string;
  key_hash: string;
  last4: string;
  role: string;
  status: string;
  budget: string | null;
  user_budget: string | null;
  limits: string;
  user_limits: string | null;
  allowed_models: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface ProviderCredentialsTable {
  id: string;
  name: string;
  provider: string;
  /** AES-256-GCM envelope (iv.tag.ciphertext, base64) of the JSON secret {apiKey, …settings}. */
  secret_ciphertext: string;
  created_at: number;
}

export interface DeploymentsTable {
  id: string;
  model_id: string;
  provider: string;
  upstream_model: string;
  credential_id: string | null;
  base_url: string | null;
  weight: number;
  priority: number;
  timeouts: string;
  rpm: number | null;
  tpm: number | null;
  pricing: string | null;
  settings: string;
  enabled: number;
  created_at: number;
}

export interface ModelsTable {
  id: string;
  owned_by: string;
  strategy: string;
  fallbacks: string;
  description: string | null;
  created_at: number;
}

export interface PricingTable {
  id: string;
  model_id: string;
  /** '' for the global price; an org id for an org override. */
  org_id: string;
  prices: string;
  updated_at: number;
}

export interface CreditTransactionsTable {
  id: string;
  org_id: string;
  amount_nanos: number;
  kind: string;
  note: string | null;
  created_at: number;
}

export interface SpendLedgerTable {
  id: string;
  request_id: string;
  org_id: string;
  key_id: string;
  key_alias: string;
  team_id: string | null;
  user: string | null;
  model: string;
  operation: string;
  units: string;
  cost_nanos: number;
  unpriced: number;
  created_at: number;
}

/** The ledger summed per account and UTC day, kept by a trigger (metering/spend-rollup-migration.ts). */
export interface SpendDailyTable {
  /** 'org' | 'team' | 'key' | 'user' */
  scope: string;
  owner_id: string;
  /** The call's `user` value for the 'user' scope, '' otherwise. */
  user: string;
  day_ms: number;
  cost_nanos: number;
}

/** Spend counters that miss costs the ledger has, to be seeded again (metering/counter-repairs.ts). */
export interface SpendCounterRepairsTable {
  account_key: string;
  recorded_at: number;
  /** New on every record of the key, so applying an older record does not forget a newer one. */
  record_id: string;
}

export interface RequestLogTable {
  id: string;
  request_id: string;
  org_id: string | null;
  key_id: string | null;
  key_alias: string | null;
  team_id: string | null;
  user: string | null;
  model: string | null;
  operation: string;
  status: number;
  error_code: string | null;
  latency_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_nanos: number;
  deployment_id: string | null;
  attempts: number;
  cache: string | null;
  stream: number;
  details: string | null;
  created_at: number;
}

export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface CoreTables {
  gw_settings: SettingsTable;
  orgs: OrgsTable;
  teams: TeamsTable;
  virtual_keys: VirtualKeysTable;
  provider_credentials: ProviderCredentialsTable;
  deployments: DeploymentsTable;
  models: ModelsTable;
  pricing: PricingTable;
  credit_transactions: CreditTransactionsTable;
  spend_ledger: SpendLedgerTable;
  spend_daily: SpendDailyTable;
  spend_counter_repairs: SpendCounterRepairsTable;
  request_log: RequestLogTable;
  leases: LeasesTable;
}

export interface Database extends CoreTables, FeatureTables {}
