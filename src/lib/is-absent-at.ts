/**
 * Whether nothing was sent at `path` inside a parsed JSON value: the one case a validation error calls
 * a missing parameter. A value that was sent but is wrong (wrong type, not one of the options, no union
 * member matches) is an invalid value instead. zod leaves `issue.input` out unless asked to report
 * inputs, and its issue codes do not tell the two apart (a missing union or enum field is
 * `invalid_union` or `invalid_value`, like a wrong one), so the input itself decides.
 */
export function isAbsentAt(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let value: unknown = input;
  for (const key of path) {
    // Own properties only: a missing `constructor` or `toString` field is still missing.
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return true;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value === undefined;
}
