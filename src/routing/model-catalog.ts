import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ModelPrice } from '../metering/model-price.js';
import type { DeploymentTarget } from '../providers/provider.js';
import type { CatalogFile, FileModel } from './catalog-file.js';
import { readCatalogRows } from './catalog-rows.js';
import { DEFAULT_TIMEOUTS, type Deployment, type ModelRoute } from './catalog-types.js';
import { defaultDeployment } from './default-deployment.js';

/**
 * The public model ids and the deployments behind them, merged from the database (admin API) and
 * the GW_CONFIG file, plus the built-in `local` models. Reads are served from memory; `reload()`
 * re-reads after an admin change (and, with Redis, when another instance announces one).
 */
export interface ModelCatalog {
  get(modelId: string): ModelRoute | undefined;
  list(): readonly ModelRoute[];
  reload(): Promise<void>;
  /** What a provider needs to call this deployment, credentials decrypted; undefined for an unknown id. */
  target(deploymentId: string): DeploymentTarget | undefined;
}

/** A model served by a built-in provider (the `local` models); its one deployment uses provider `ownedBy`. */
export interface BuiltinModel {
  readonly id: string;
  readonly ownedBy: string;
  readonly description?: string;
  readonly price?: ModelPrice;
}

/** Opens sealed credential secrets (lib/secret-box.ts). */
export interface CredentialVault {
  open(envelope: string): string;
}

export interface ModelCatalogDependencies {
  db: Kysely<Database>;
  fileConfig?: CatalogFile;
  builtinModels?: readonly BuiltinModel[];
  credentialVault: CredentialVault;
  /** Epoch milliseconds for `created` of file and built-in models. */
  now?: () => number;
  logger?: { warn(object: Record<string, unknown>, message: string): void };
}

interface Snapshot {
  models: Map<string, ModelRoute>;
  list: ModelRoute[];
  targets: Map<string, DeploymentTarget>;
}

/**
 * Merge rules (docs/routing.md): a model's metadata comes from the database over the file over the
 * built-ins; its deployments are the union of database and file deployments, and a built-in
 * model's own deployment is used only when neither defines any.
 */
export async function createModelCatalog(dependencies: ModelCatalogDependencies): Promise<ModelCatalog> {
  const bootTime = (dependencies.now ?? Date.now)();
  let snapshot = await build(dependencies, bootTime);
  return {
    get: (modelId) => snapshot.models.get(modelId),
    list: () => snapshot.list,
    target: (deploymentId) => snapshot.targets.get(deploymentId),
    async reload() {
      snapshot = await build(dependencies, bootTime);
    },
  };
}

async function build(dependencies: ModelCatalogDependencies, bootTime: number): Promise<Snapshot> {
  const rows = await readCatalogRows(dependencies.db);
  const models = new Map<string, ModelRoute>();
  const targets = new Map<string, DeploymentTarget>();
  const builtinDeployments = new Map<string, Deployment>();

  for (const builtin of dependencies.builtinModels ?? []) {
    models.set(builtin.id, {
      id: builtin.id,
      ownedBy: builtin.ownedBy,
      strategy: 'priority',
      fallbacks: [],
      description: builtin.description ?? null,
      createdAt: bootTime,
      deployments: [],
      source: 'builtin',
      pricing: builtin.price ?? null,
    });
    const deployment = defaultDeployment(`builtin:${builtin.id}`, builtin.id, builtin.ownedBy, builtin.id, 'builtin');
    builtinDeployments.set(builtin.id, deployment);
    targets.set(deployment.id, targetOf(deployment, undefined, {}));
  }

  for (const fileModel of dependencies.fileConfig?.models ?? []) {
    const previous = models.get(fileModel.id);
    models.set(fileModel.id, {
      id: fileModel.id,
      ownedBy: fileModel.owned_by ?? fileModel.deployments[0]?.provider ?? previous?.ownedBy ?? 'gw',
      strategy: fileModel.strategy,
      fallbacks: fileModel.fallbacks,
      description: fileModel.description ?? previous?.description ?? null,
      createdAt: bootTime,
      deployments: [],
      source: 'file',
      pricing: fileModel.pricing ?? previous?.pricing ?? null,
    });
    for (const [index, deployment] of fileDeployments(fileModel).entries()) {
      models.get(fileModel.id)!.deployments.push(deployment.deployment);
      if (targets.has(deployment.deployment.id)) {
        throw new Error(`GW_CONFIG: models.${fileModel.id}.deployments.${index}.id: duplicate deployment id`);
      }
      targets.set(deployment.deployment.id, targetOf(deployment.deployment, deployment.apiKey, {}));
    }
  }

  for (const row of rows.models) {
    const previous = models.get(row.id);
    models.set(row.id, { ...row, pricing: previous?.pricing ?? null, deployments: previous?.deployments ?? [] });
  }

  for (const deployment of rows.deployments) {
    let model = models.get(deployment.modelId);
    if (!model) {
      // A deployment added before its model row: list it under a default entry rather than hide it.
      model = {
        id: deployment.modelId,
        ownedBy: deployment.provider,
        strategy: 'priority',
        fallbacks: [],
        description: null,
        createdAt: bootTime,
        deployments: [],
        source: 'database',
        pricing: null,
      };
      models.set(model.id, model);
    }
    model.deployments.push(deployment);
    const credential = deployment.credentialId ? rows.credentials.get(deployment.credentialId) : undefined;
    const secret = credential ? openCredential(credential.secretCiphertext, deployment.id, dependencies) : {};
    targets.set(deployment.id, targetOf(deployment, secret.apiKey, secret.settings ?? {}));
  }

  for (const [modelId, deployment] of builtinDeployments) {
    const model = models.get(modelId)!;
    if (model.deployments.length === 0) model.deployments.push(deployment);
  }

  // By code point, not localeCompare: the same order on every machine, and no ICU collation data
  // paged in (a few MB of resident memory) for a list of ASCII ids.
  const list = [...models.values()].sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
  for (const model of list) Object.freeze(model.deployments);
  return { models, list, targets };
}

function fileDeployments(model: FileModel): Array<{ deployment: Deployment; apiKey: string | undefined }> {
  return model.deployments.map((entry, index) => {
    const deployment = defaultDeployment(
      entry.id ?? `${model.id}#${index}`,
      model.id,
      entry.provider,
      entry.upstream_model,
      'file',
    );
    deployment.baseUrl = entry.base_url ?? null;
    deployment.weight = entry.weight;
    deployment.priority = entry.priority;
    deployment.timeouts = {
      connectMs: entry.timeouts?.connect_ms ?? DEFAULT_TIMEOUTS.connectMs,
      firstByteMs: entry.timeouts?.first_byte_ms ?? DEFAULT_TIMEOUTS.firstByteMs,
      totalMs: entry.timeouts?.total_ms ?? DEFAULT_TIMEOUTS.totalMs,
    };
    deployment.rpm = entry.rpm ?? null;
    deployment.tpm = entry.tpm ?? null;
    deployment.settings = entry.settings;
    deployment.pricing = entry.pricing ?? null;
    deployment.enabled = entry.enabled;
    return { deployment, apiKey: entry.api_key };
  });
}

function targetOf(deployment: Deployment, apiKey: string | undefined, credentialSettings: Record<string, string>): DeploymentTarget {
  return Object.freeze({
    deploymentId: deployment.id,
    provider: deployment.provider,
    upstreamModel: deployment.upstreamModel,
    ...(deployment.baseUrl ? { baseUrl: deployment.baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    settings: Object.freeze({ ...credentialSettings, ...deployment.settings }),
    timeouts: deployment.timeouts,
  });
}

/** The sealed secret is JSON `{apiKey, …settings}`; a secret that fails to open leaves the deployment keyless (logged). */
function openCredential(
  ciphertext: string,
  deploymentId: string,
  dependencies: ModelCatalogDependencies,
): { apiKey?: string; settings?: Record<string, string> } {
  try {
    const secret = JSON.parse(dependencies.credentialVault.open(ciphertext)) as Record<string, unknown>;
    const settings: Record<string, string> = {};
    for (const [name, value] of Object.entries(secret)) {
      if (name !== 'apiKey' && typeof value === 'string') settings[name] = value;
    }
    return { apiKey: typeof secret.apiKey === 'string' ? secret.apiKey : undefined, settings };
  } catch (error) {
    dependencies.logger?.warn({ deploymentId, error: (error as Error).message }, 'cannot open provider credential');
    return {};
  }
}
