/**
 * gw's request body extras (SPEC "Chat completion request"). They control guardrails, prompt
 * templates and caching per request; the gateway strips them before calling a provider.
 */
export interface GwChatExtras {
  /** Guardrails to run on this call, by id, in addition to those attached to the key. */
  gw_guardrail_ids?: string[] | null;
  /** Serve from (and fill) the gateway's response cache. */
  gw_cache?: boolean | null;
  /** Render this prompt template into the messages. */
  gw_prompt_template_id?: string | null;
  /** Values for the template's variables. */
  gw_prompt_variables?: Record<string, unknown> | null;
  /** Pin a template version instead of the latest (gw's extension). */
  gw_prompt_version?: number | null;
}

/** The extra accepted where only caching applies (completions, embeddings). */
export interface GwCacheExtras {
  gw_cache?: boolean | null;
}
