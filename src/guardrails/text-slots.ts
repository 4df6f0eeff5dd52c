/**
 * The texts guardrails check, each with the path where it sits in a request or an answer body, so
 * that redacted texts can be written back without touching anything else. Bodies are unvalidated
 * JSON here (tool definitions, upstream answers), hence the type check on every value.
 */
export type TextPath = readonly (string | number)[];

export interface TextSlots {
  texts: string[];
  paths: TextPath[];
}

/** The value as an object whose fields can be read, when it is one. */
export function fieldsOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The value when it is an array, else no items. */
export function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function emptySlots(): TextSlots {
  return { texts: [], paths: [] };
}

/** Adds the value when it is a non-empty string. */
export function addText(slots: TextSlots, value: unknown, path: TextPath): void {
  if (typeof value !== 'string' || value.length === 0) return;
  slots.texts.push(value);
  slots.paths.push(path);
}

/**
 * Adds every string inside a JSON value (a tool's parameter schema: descriptions, enum values,
 * defaults, examples). Property names are not texts: they are the schema's structure.
 */
export function addStringsWithin(slots: TextSlots, value: unknown, path: TextPath): void {
  if (typeof value === 'string') addText(slots, value, path);
  else if (Array.isArray(value)) value.forEach((item, index) => addStringsWithin(slots, item, [...path, index]));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) addStringsWithin(slots, item, [...path, key]);
  }
}

/**
 * A copy of `root` with each slot whose text changed set to its new text. Only the objects and
 * arrays on the way to a changed text are copied; the original is never mutated.
 */
export function replaceTexts<T>(root: T, slots: TextSlots, texts: readonly string[]): T {
  const copies = new Map<object, Record<string | number, unknown>>();
  const copyOf = (node: object): Record<string | number, unknown> => {
    let copy = copies.get(node);
    if (copy === undefined) {
      copy = (Array.isArray(node) ? [...node] : { ...node }) as Record<string | number, unknown>;
      copies.set(node, copy);
    }
    return copy;
  };
  slots.paths.forEach((path, index) => {
    if (texts[index] === slots.texts[index] || path.length === 0) return;
    let original = root as unknown as Record<string | number, unknown>;
    let copy = copyOf(original);
    for (const key of path.slice(0, -1)) {
      original = original[key] as Record<string | number, unknown>;
      const child = copyOf(original);
      copy[key] = child;
      copy = child;
    }
    copy[path[path.length - 1]] = texts[index];
  });
  return (copies.get(root as unknown as object) as T | undefined) ?? root;
}
