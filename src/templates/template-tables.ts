/** Row types of the prompt-template tables (portable conventions in db/schema.ts). */
export interface PromptTemplatesTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  latest_version: number;
  created_at: number;
  updated_at: number;
}

/** Versions are immutable: rows are only ever inserted. */
export interface PromptTemplateVersionsTable {
  template_id: string;
  version: number;
  /** JSON array of chat messages whose string contents are Jinja2-style templates. */
  messages: string;
  model: string | null;
  /** JSON object of default request parameters (temperature, max_tokens, …), or null. */
  parameters: string | null;
  created_at: number;
}

export interface TemplateTables {
  prompt_templates: PromptTemplatesTable;
  prompt_template_versions: PromptTemplateVersionsTable;
}
