import type { AlertTables } from '../alerts/alert-tables.js';
import type { ExperimentTables } from '../experiments/experiment-tables.js';
import type { GuardrailTables } from '../guardrails/guardrail-tables.js';
import type { TemplateTables } from '../templates/template-tables.js';
import type { VideoTables } from '../videos/video-tables.js';

/**
 * Tables owned by feature folders. Each feature declares its table types next to its code and adds
 * them here, so db/schema.ts stays the one place that lists every table.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface FeatureTables
  extends AlertTables, GuardrailTables, TemplateTables, ExperimentTables, VideoTables {}
