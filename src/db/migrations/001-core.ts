import { type Kysely, sql } from 'kysely';

/** Core tenancy, catalog, metering and log tables. Types chosen to be portable (see db/schema.ts). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gw_settings')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('value', 'text', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('tier', 'text', (column) => column.notNull())
    .addColumn('custom_limits', 'text', (column) => column.notNull())
    .addColumn('enabled_models', 'text')
    .addColumn('budget', 'text')
    .addColumn('settings', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('org_id', 'text', (column) => column.notNull().references('orgs.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('allowed_models', 'text')
    .addColumn('budget', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('virtual_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('org_id', 'text', (column) => column.notNull().references('orgs.id'))
    .addColumn('team_id', 'text', (column) => column.references('teams.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('key_hash', 'text', (column) => column.notNull().unique())
    .addColumn('last4', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('budget', 'text')
    .addColumn('user_budget', 'text')
    .addColumn('limits', 'text', (column) => column.notNull())
    .addColumn('user_limits', 'text')
    .addColumn('allowed_models', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('virtual_keys_org').on('virtual_keys').column('org_id').execute();

  await db.schema
    .createTable('provider_credentials')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('secret_ciphertext', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('models')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('owned_by', 'text', (column) => column.notNull())
    .addColumn('strategy', 'text', (column) => column.notNull())
    .addColumn('fallbacks', 'text', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('deployments')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('model_id', 'text', (column) => column.notNull())
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('upstream_model', 'text', (column) => column.notNull())
    .addColumn('credential_id', 'text', (column) => column.references('provider_credentials.id'))
    .addColumn('base_url', 'text')
    .addColumn('weight', 'integer', (column) => column.notNull())
    .addColumn('priority', 'integer', (column) => column.notNull())
    .addColumn('timeouts', 'text', (column) => column.notNull())
    .addColumn('rpm', 'integer')
    .addColumn('tpm', 'integer')
    .addColumn('pricing', 'text')
    .addColumn('settings', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('deployments_model').on('deployments').column('model_id').execute();

  await db.schema
    .createTable('pricing')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('model_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('prices', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('pricing_model_org', ['model_id', 'org_id'])
    .execute();

  await db.schema
    .createTable('credit_transactions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('amount_nanos', 'bigint', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('credit_transactions_org').on('credit_transactions').column('org_id').execute();

  await db.schema
    .createTable('spend_ledger')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('key_alias', 'text', (column) => column.notNull())
    .addColumn('team_id', 'text')
    .addColumn('user', 'text')
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('operation', 'text', (column) => column.notNull())
    .addColumn('units', 'text', (column) => column.notNull())
    .addColumn('cost_nanos', 'bigint', (column) => column.notNull())
    .addColumn('unpriced', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('spend_ledger_org_time').on('spend_ledger').columns(['org_id', 'created_at']).execute();
  await db.schema.createIndex('spend_ledger_key_time').on('spend_ledger').columns(['key_id', 'created_at']).execute();
  await db.schema.createIndex('spend_ledger_request').on('spend_ledger').column('request_id').unique().execute();

  await db.schema
    .createTable('request_log')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('key_alias', 'text')
    .addColumn('team_id', 'text')
    .addColumn('user', 'text')
    .addColumn('model', 'text')
    .addColumn('operation', 'text', (column) => column.notNull())
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('error_code', 'text')
    .addColumn('latency_ms', 'double precision', (column) => column.notNull())
    .addColumn('prompt_tokens', 'integer', (column) => column.notNull())
    .addColumn('completion_tokens', 'integer', (column) => column.notNull())
    .addColumn('cost_nanos', 'bigint', (column) => column.notNull())
    .addColumn('deployment_id', 'text')
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('cache', 'text')
    .addColumn('stream', 'integer', (column) => column.notNull())
    .addColumn('details', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('request_log_org_time').on('request_log').columns(['org_id', 'created_at']).execute();

  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('holder', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  void sql;
}
