import { tapStream } from '../lib/tap-stream.js';
import type { GatewayCall, Next, Outcome, Stage } from '../pipeline/stage.js';
import { usageTotals } from '../protocol/usage.js';
import { assignVariant } from './assign-variant.js';
import type { ExperimentStatsRecorder } from './experiment-stats-recorder.js';
import type { Experiment } from './experiment-types.js';
import type { ExperimentStore } from './sql-experiment-store.js';
import { admitted } from '../pipeline/admission.js';
import { isModelVisible } from '../tenancy/model-visibility.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import type { ChatModelDirectory } from './check-variant-models.js';

export interface AbTestStageDeps {
  store: Pick<ExperimentStore, 'listActive' | 'peekActive'>;
  stats: Pick<ExperimentStatsRecorder, 'record'>;
  /** The catalog as it is now: a variant's model may have been removed since the experiment was written. */
  models: ChatModelDirectory;
  random?: () => number;
}

/**
 * Runs a chat call through the org's active experiment on its model id or its prompt template.
 * The variant may change the model, pin a template version and override parameters. Outcome
 * (error, latency, tokens, cost) is read from call.record once the call has settled, which for a
 * stream is when it ends; metering, further in, has written usage and cost by then.
 * A call whose variant names a model the caller may not use is left out of the experiment.
 */
export function createAbTestStage(deps: AbTestStageDeps): Stage {
  return {
    name: 'abTest',
    run(call, next) {
      if (call.operation !== 'chat') return next(call);
      // Most orgs run no experiment: known from memory, the call goes on without waiting a turn.
      const cached = deps.store.peekActive?.(call.auth.org.id);
      if (cached !== undefined && cached.length === 0) return next(call);
      return runExperiment(call, next, cached);
    },
  };

  async function runExperiment(call: GatewayCall, next: Next, cached: Experiment[] | undefined): Promise<Outcome> {
    // An assignment is recorded with the call's outcome: only for admitted calls.
    await admitted(call);
    const experiments = cached ?? (await deps.store.listActive(call.auth.org.id));
    if (experiments.length === 0) return next(call);
    const request = call.request as Record<string, unknown>;
    const templateId = (request.gw_prompt_template_id as string | null | undefined) ?? call.auth.org.settings.defaultPromptTemplateId;
    const experiment = experiments.find(
      (candidate) =>
        (candidate.targetKind === 'model' && candidate.target === call.model) ||
        (candidate.targetKind === 'template' && templateId !== null && candidate.target === templateId),
    );
    if (!experiment) return next(call);
    const variant = assignVariant(experiment, call.user, deps.random);
    const model = variant.model ?? call.model;
    // The edge checked the caller's model, not the variant's: one the key, team or org may not use,
    // or that is no longer served for chat, must not be reached through the experiment. Such a call
    // takes no part in it: it runs as sent, without the x-gw-ab-test header or a stats entry.
    if (model !== call.model && !mayRunVariantModel(call.auth, model, deps.models)) return next(call);
    const changed: Record<string, unknown> = { ...request, ...(variant.parameters ?? {}) };
    changed.model = model;
    if (experiment.targetKind === 'template') {
      changed.gw_prompt_template_id = experiment.target;
      if (variant.template_version !== undefined) changed.gw_prompt_version = variant.template_version;
    }
    const label = `${experiment.name}:${variant.name}`;
    call.record.abVariant = label;
    call.record.headers['x-gw-ab-test'] = label;
    const settle = (error: boolean) => recordOutcome(deps, experiment, variant.name, call, error);
    let outcome;
    try {
      outcome = await next({ ...call, request: changed, model });
    } catch (error) {
      settle(true);
      throw error;
    }
    if (outcome.kind !== 'stream') {
      settle(false);
      return outcome;
    }
    return { kind: 'stream', events: tapStream(outcome.events, { onEnd: ({ completed }) => settle(!completed) }) };
  }
}

/** The same rule as the edge's model check (tenancy/model-visibility.ts, as the edge uses in http/model-access.ts), for the model a variant swaps in. */
function mayRunVariantModel(auth: AuthContext, model: string, models: ChatModelDirectory): boolean {
  return models.has(model) && models.supports(model, 'chat') && isModelVisible(auth, model);
}

function recordOutcome(deps: AbTestStageDeps, experiment: Experiment, variant: string, call: GatewayCall, error: boolean): void {
  const { promptTokens, completionTokens } = call.record.usage ? usageTotals(call.record.usage) : { promptTokens: 0, completionTokens: 0 };
  deps.stats.record({
    experimentId: experiment.id,
    variant,
    error,
    latencyMs: performance.now() - call.startedAt,
    promptTokens,
    completionTokens,
    costNanos: call.record.costNanos ?? 0,
  });
}
