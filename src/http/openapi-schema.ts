import { z } from 'zod';

const ZOD_SCHEMA = Symbol.for('gw.zodSchema');

/**
 * The JSON Schema of a zod schema, for the OpenAPI document only. Validation stays with zod in the
 * handlers (one error format, one source of truth); the route's validator compiler is a no-op.
 */
export function openApiSchema(schema: z.ZodType): Record<string, unknown> {
  const jsonSchema = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
  delete jsonSchema.$schema;
  Object.defineProperty(jsonSchema, ZOD_SCHEMA, { value: schema, enumerable: false });
  return jsonSchema;
}
