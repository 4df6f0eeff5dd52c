// Command-line options the single-purpose bench tools share (after-burst.mjs, memory-map.mjs, head-parse-cost.mjs, …).

/** `option(name, fallback)`: the value after `--name` in argv, or the fallback. */
export function optionReader(argv) {
  return (name, fallback) => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 && argv[index + 1] !== undefined ? argv[index + 1] : fallback;
  };
}

/**
 * Numeric options by name, each `--name N` or its default; exits with a usage message unless every
 * one is a positive number (or zero, for the names in `mayBeZero`).
 */
export function numberOptions(option, defaults, { mayBeZero = [] } = {}) {
  const values = {};
  for (const [name, fallback] of Object.entries(defaults)) {
    const value = Number(option(name, fallback));
    if (!(Number.isFinite(value) && (value > 0 || (value === 0 && mayBeZero.includes(name))))) {
      console.error(`--${name} wants a positive number`);
      process.exit(2);
    }
    values[name] = value;
  }
  return values;
}

const isEnvironmentSetting = (token) => /^[A-Z_][A-Z0-9_]*=/.test(token);

/**
 * The variants to compare: `default` (no extra settings) and one per `--variant NAME=SETTINGS`,
 * where SETTINGS are Node flags (for GW_NODE_FLAGS; the later flag wins) and NAME=VALUE
 * environment variables, in any order. Exits with a usage message on a malformed variant.
 */
export function readVariants(argv) {
  const variants = [{ name: 'default', flags: '', env: {} }];
  for (let index = 0; index < argv.length; index++) {
    if (argv[index] !== '--variant') continue;
    const spec = argv[index + 1] ?? '';
    const equals = spec.indexOf('=');
    if (equals <= 0) {
      console.error(`--variant wants NAME=SETTINGS, got '${spec}'`);
      process.exit(2);
    }
    const tokens = spec.slice(equals + 1).split(/\s+/).filter(Boolean);
    const env = Object.fromEntries(tokens.filter(isEnvironmentSetting).map((token) => [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)]));
    variants.push({ name: spec.slice(0, equals), flags: tokens.filter((token) => !isEnvironmentSetting(token)).join(' '), env });
  }
  return variants;
}

/** How a variant's settings read in a report: GW_NODE_FLAGS='…' NAME=VALUE …, or '' for none. */
export function describeSettings(variant) {
  return [variant.flags && `GW_NODE_FLAGS='${variant.flags}'`, ...Object.entries(variant.env).map(([key, value]) => `${key}=${value}`)].filter(Boolean).join(' ');
}
