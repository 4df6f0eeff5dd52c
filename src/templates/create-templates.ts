import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Stage } from '../pipeline/stage.js';
import { createTemplateRenderer } from './render-template.js';
import { createSqlTemplateStore, type TemplateStore } from './sql-template-store.js';
import { cacheTemplateStore } from './cached-template-store.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { ModelDirectory } from '../http/model-access.js';
import { createTemplateStage } from './template-stage.js';

export interface Templates {
  store: TemplateStore;
  stage: Stage;
}

export function createTemplates(options: { db: Kysely<Database>; models: ModelDirectory; changes?: ChangeFeed; renderedCharsLimit?: number }): Templates {
  const sqlStore = createSqlTemplateStore(options.db);
  // With a change feed, the request path reads template versions from memory.
  const store = options.changes ? cacheTemplateStore(sqlStore, options.changes) : sqlStore;
  return { store, stage: createTemplateStage({ store, renderer: createTemplateRenderer({ renderedCharsLimit: options.renderedCharsLimit }), models: options.models }) };
}
