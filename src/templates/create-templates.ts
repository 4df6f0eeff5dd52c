import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Stage } from '../pipeline/stage.js';
import { createTemplateRenderer } from './render-template.js';
import { createSqlTemplateStore, type TemplateStore } from './sql-template-store.js';
import { createTemplateStage } from './template-stage.js';

export interface Templates {
  store: TemplateStore;
  stage: Stage;
}

export function createTemplates(options: { db: Kysely<Database> }): Templates {
  const store = createSqlTemplateStore(options.db);
  return { store, stage: createTemplateStage({ store, renderer: createTemplateRenderer() }) };
}
