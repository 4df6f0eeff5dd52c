import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { createDatabase } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createAdminClient } from './admin-client.js';

const USAGE = `gw — the gw gateway command line

Server:
  gw start                         start the gateway (same as npm start)
  gw migrate                       bring the database (GW_DATABASE_URL) up to date

Administration (calls the admin API of a running gateway at GW_URL, default http://127.0.0.1:4000,
with the master credential or an org-admin key in GW_MASTER_KEY):
  gw orgs list
  gw orgs create --name NAME [--tier tier1|tier2|tier3|enterprise]
  gw orgs credit ORG_ID --amount USD [--note TEXT]
  gw keys list [--org ORG_ID]
  gw keys create --org ORG_ID --name NAME [--team TEAM_ID] [--budget USD] [--models a,b] [--role inference|org_admin]
  gw keys revoke KEY_ID
  gw models list                   deployments and their health

Trying the gateway (uses GW_API_KEY and GW_BASE_URL, default http://127.0.0.1:4000/v1):
  gw chat "prompt" [--model M] [--stream]
  gw models
  gw credits
`;

function print(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
}

async function runAdmin(args: string[]): Promise<void> {
  const [area, action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      tier: { type: 'string' },
      org: { type: 'string' },
      team: { type: 'string' },
      budget: { type: 'string' },
      models: { type: 'string' },
      role: { type: 'string' },
      amount: { type: 'string' },
      note: { type: 'string' },
    },
  });
  const credential = process.env.GW_MASTER_KEY ?? process.env.GW_ADMIN_KEY;
  if (!credential) throw new Error('set GW_MASTER_KEY to the master credential (printed on first start) or an org-admin key');
  const admin = createAdminClient(process.env.GW_URL ?? 'http://127.0.0.1:4000', credential);
  const key = `${area} ${action}`;
  switch (key) {
    case 'orgs list':
      return print(await admin.request('GET', '/api/admin/orgs'));
    case 'orgs create':
      return print(await admin.request('POST', '/api/admin/orgs', { name: values.name, tier: values.tier ?? 'tier1' }));
    case 'orgs credit':
      return print(await admin.request('POST', `/api/admin/orgs/${positionals[0]}/credits`, { amount_usd: values.amount, note: values.note }));
    case 'keys list':
      return print(await admin.request('GET', `/api/admin/keys${values.org ? `?org_id=${encodeURIComponent(values.org)}` : ''}`));
    case 'keys create': {
      const created = await admin.request<Record<string, unknown>>('POST', '/api/admin/keys', {
        org_id: values.org,
        name: values.name,
        team_id: values.team,
        role: values.role,
        budget: values.budget ? { limit_usd: values.budget } : undefined,
        allowed_models: values.models ? values.models.split(',') : undefined,
      });
      print(created);
      process.stderr.write('The full key is shown once; store it now.\n');
      return;
    }
    case 'keys revoke':
      return print(await admin.request('POST', `/api/admin/keys/${positionals[0]}/revoke`));
    case 'models list':
      return print(await admin.request('GET', '/api/admin/deployments/health'));
    default:
      throw new Error(`unknown command: gw ${args.join(' ')}\n\n${USAGE}`);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') return print(USAGE);
  if (command === 'start') {
    await import('../main.js');
    return;
  }
  if (command === 'migrate') {
    const config = loadConfig(process.env);
    const database = await createDatabase(config.databaseUrl, { sqliteWriter: config.sqliteWriter });
    let ahead: string[] | undefined;
    const applied = await migrateToLatest(database.db, { onSchemaAhead: (unknown) => (ahead = unknown) });
    await database.close();
    if (ahead) return print(`database is newer than this version (it has ${ahead.join(', ')}); nothing applied`);
    return print(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  }
  if ((command === 'models' && rest.length === 0) || command === 'chat' || command === 'credits') {
    const { runClientCli } = await import('./client-commands.js');
    process.exitCode = await runClientCli([command, ...rest]);
    return;
  }
  if (command === 'orgs' || command === 'keys' || command === 'models') return runAdmin([command, ...rest]);
  throw new Error(`unknown command: ${command}\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
