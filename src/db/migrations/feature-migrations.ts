import type { Migration } from 'kysely';
import { alertMigration } from '../../alerts/alert-migration.js';
import { experimentMigration } from '../../experiments/experiment-migration.js';
import { guardrailMigration } from '../../guardrails/guardrail-migration.js';
import { templateMigration } from '../../templates/template-migration.js';
import { videoMigration, videoRefundMigration } from '../../videos/video-migration.js';
import { spendRollupMigration } from '../../metering/spend-rollup-migration.js';
import { counterRepairMigration } from '../../metering/counter-repairs.js';

/**
 * Migrations of feature folders, one line each, named "NNN-feature" so they sort after 001-core.
 */
export const FEATURE_MIGRATIONS: Record<string, Migration> = {
  '006-alerts': alertMigration,
  '005-guardrails': guardrailMigration,
  '005-templates': templateMigration,
  '005-experiments': experimentMigration,
  '007-videos': videoMigration,
  '008-spend-daily': spendRollupMigration,
  '009-video-refunds': videoRefundMigration,
  '010-spend-counter-repairs': counterRepairMigration,
};
