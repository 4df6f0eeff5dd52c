import { type GuardedPost, askGuardrailWebhook } from './guardrail-webhook.js';
import { detectDenyList, detectRegex, compilePatterns } from './detect-custom.js';
import { detectPii } from './detect-pii.js';
import { DEFAULT_INJECTION_THRESHOLD, assessPromptInjection } from './detect-prompt-injection.js';
import { detectSecrets } from './detect-secrets.js';
import type { Finding, Guardrail, PiiType } from './guardrail-types.js';
import { redactSpans } from './redact-spans.js';
import type { CallSignal } from '../lib/call-signal.js';

export interface GuardrailOutcome {
  triggered: boolean;
  /** The texts after redaction (unchanged when nothing was found or the guardrail blocks). */
  texts: string[];
  /** Finding types, never matched content: safe for logs and events. */
  types: string[];
  reason?: string;
  /** Block whatever the configured action (a webhook said block). */
  forceBlock?: boolean;
  /**
   * The webhook gave no decision: the call was cancelled while it was asked (the client left, the
   * time cap passed), or it failed (unreachable, timed out, non-2xx, malformed answer) and the
   * guardrail fails closed. Neither says anything about the content, so neither is a block.
   */
  unanswered?: { cancelled: boolean; cause: unknown };
}

export interface EvaluationContext {
  stage: 'pre' | 'post';
  post?: GuardedPost;
  signal?: CallSignal;
}

/** Runs one guardrail over the texts of a request or an answer. */
export async function evaluateGuardrail(guardrail: Guardrail, texts: string[], context: EvaluationContext): Promise<GuardrailOutcome> {
  if (guardrail.kind === 'webhook') return evaluateWebhook(guardrail, texts, context);
  const detect = findingsDetector(guardrail);
  const types = new Set<string>();
  let triggered = false;
  let reason: string | undefined;
  const redacted = texts.map((text) => {
    const { findings, why } = detect(text);
    if (findings.length === 0) return text;
    triggered = true;
    reason ??= why;
    for (const finding of findings) types.add(finding.type);
    return redactSpans(text, findings);
  });
  return { triggered, texts: triggered ? redacted : texts, types: [...types], reason };
}

type Detector = (text: string) => { findings: Finding[]; why?: string };

function findingsDetector(guardrail: Guardrail): Detector {
  const config = guardrail.config as Record<string, unknown>;
  switch (guardrail.kind) {
    case 'pii': {
      const types = config.types as PiiType[] | undefined;
      return (text) => {
        const findings = detectPii(text, types);
        return { findings, why: findings.length ? `personal data detected (${uniqueTypes(findings)})` : undefined };
      };
    }
    case 'secrets':
      return (text) => {
        const findings = detectSecrets(text, { highEntropy: config.high_entropy as boolean | undefined });
        return { findings, why: findings.length ? `secret detected (${uniqueTypes(findings)})` : undefined };
      };
    case 'prompt_injection': {
      const threshold = (config.threshold as number | undefined) ?? DEFAULT_INJECTION_THRESHOLD;
      return (text) => {
        const assessment = assessPromptInjection(text);
        if (assessment.score < threshold) return { findings: [] };
        return { findings: assessment.findings, why: `prompt injection suspected (score ${assessment.score} ≥ ${threshold})` };
      };
    }
    case 'regex': {
      const patterns = compilePatterns(config.patterns as string[], config.case_insensitive === true);
      const label = (config.label as string | undefined) ?? 'custom';
      return (text) => {
        const findings = detectRegex(text, patterns, label);
        return { findings, why: findings.length ? 'custom pattern matched' : undefined };
      };
    }
    case 'deny_list': {
      const terms = config.terms as string[];
      const label = (config.label as string | undefined) ?? 'denied_term';
      return (text) => {
        const findings = detectDenyList(text, terms, config.whole_words !== false, label);
        return { findings, why: findings.length ? 'denied term found' : undefined };
      };
    }
    default:
      throw new Error(`no detector for guardrail kind ${guardrail.kind}`);
  }
}

function uniqueTypes(findings: Finding[]): string {
  return [...new Set(findings.map((finding) => finding.type))].join(', ');
}

async function evaluateWebhook(guardrail: Guardrail, texts: string[], context: EvaluationContext): Promise<GuardrailOutcome> {
  const config = guardrail.config as { url: string; timeout_ms?: number; headers?: Record<string, string>; fail_open?: boolean };
  try {
    if (!context.post) throw new Error('no guarded HTTP client is configured for webhook guardrails');
    const answer = await askGuardrailWebhook(
      context.post,
      config,
      { guardrail: { id: guardrail.id, name: guardrail.name }, stage: context.stage, texts },
      context.signal,
    );
    if (answer.action === 'allow') return { triggered: false, texts, types: [] };
    if (answer.action === 'redact' && answer.texts && answer.texts.length === texts.length) {
      return { triggered: true, texts: answer.texts, types: ['webhook'], reason: answer.reason ?? 'redacted by webhook' };
    }
    return { triggered: true, texts, types: ['webhook'], reason: answer.reason ?? 'blocked by webhook', forceBlock: true };
  } catch (error) {
    if (context.signal?.aborted) return { triggered: false, texts, types: [], unanswered: { cancelled: true, cause: error } };
    if (config.fail_open === true) return { triggered: false, texts, types: [] };
    // Fail closed by default: an unreachable policy service must not wave content through.
    return { triggered: false, texts, types: [], unanswered: { cancelled: false, cause: error } };
  }
}
