#!/usr/bin/env node
// Bundles the gateway server (src/main.ts and its two SQLite worker threads) into dist/server/:
// what bin/gw-server, and so `npm start`, runs. `npm run build` calls it after the type-check build.
//
//   node scripts/bundle-server.mjs            # writes dist/server/ (main.js, the workers, shared chunks, source maps)
//   node scripts/bundle-server.mjs --out DIR  # somewhere else (the bundle test writes to a temporary directory)
//
// Why: a gateway loaded as ~600 separate files keeps, per module, its own script, source text and
// loader records; one whitespace-minified bundle made the main thread's heap after a full
// collection ~6 MB smaller (27.4 -> 21.6 MB) and the peak resident memory under the benchmark's
// load 7-10 MB lower (docs/deployment.md, "Sizing", has the measurement and the command).
//
// What stays out of the bundle, loaded from node_modules as before:
// - better-sqlite3 (a native addon);
// - every package with a file that refers to its own location (__dirname, __filename,
//   import.meta, require.resolve): in one bundle those would point at dist/server/ instead of the
//   package (ioredis, pino and @fastify/swagger read files beside their own). Found anew on every
//   build from the files actually bundled, so a dependency update cannot slip one in;
// - what the code loads through createRequire (undici's parts, nunjucks, gpt-tokenizer's ranks),
//   which a bundler does not follow.
// Identifiers are not minified, so stack traces keep their function names; the source maps
// (linked, without the sources) map them back to src/*.ts under GW_NODE_FLAGS=--enable-source-maps.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Entry points, by the name of the file each becomes in the output directory. */
export const SERVER_ENTRIES = {
  main: 'src/main.ts',
  // Started by src/db/database-worker.ts from `./<name>.js` beside the code that starts them, so
  // they sit beside main.js.
  'sqlite-checkpoint-worker': 'src/db/sqlite-checkpoint-worker.ts',
  'sqlite-bulk-insert-worker': 'src/db/sqlite-bulk-insert-worker.ts',
};

const ALWAYS_EXTERNAL = ['better-sqlite3'];

/** A reference to the file's own place on disk, which means something else once bundled. */
const LOCATION_REFERENCE = /\b__dirname\b|\b__filename\b|\bimport\.meta\b|\brequire\.resolve\b/;

// Bundled CommonJS dependencies call require() for Node's built-in modules; an ES module has no
// require of its own.
const REQUIRE_BANNER = "import { createRequire as __gwCreateRequire } from 'node:module'; const require = __gwCreateRequire(import.meta.url);";

function baseOptions(external) {
  return {
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(SERVER_ENTRIES).map(([name, path]) => [name, join(root, path)])),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // No code splitting: a chunk split off for a dynamic import() of a CommonJS package exports
    // only `default`, so `const { Busboy } = await import('@fastify/busboy')` found no Busboy.
    // Unsplit, such a package is wrapped in the bundle and still evaluated only when imported;
    // its source text is part of the bundle's (~0.3 MB more).
    splitting: false,
    external,
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'linked',
    banner: { js: REQUIRE_BANNER },
    logLevel: 'error',
  };
}

/**
 * The top-level package under node_modules/ that holds `path` (the outermost one for a nested
 * copy: only that name resolves from dist/server/ to the same files).
 */
export function topLevelPackage(path) {
  const parts = path.split(/[\\/]/);
  const at = parts.indexOf('node_modules');
  if (at === -1 || at + 1 >= parts.length) return undefined;
  return parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
}

/** The packages among a build's inputs with a file that refers to its own location. */
export function packagesReferringToTheirLocation(inputPaths, readSource = (path) => readFileSync(join(root, path), 'utf8')) {
  const found = new Set();
  for (const path of inputPaths) {
    const name = topLevelPackage(path);
    if (name === undefined || found.has(name)) continue;
    if (LOCATION_REFERENCE.test(readSource(path))) found.add(name);
  }
  return [...found].sort();
}

/** Writes the bundle to `outdir` (emptied first) and returns the packages left external. */
export async function bundleServer({ outdir = join(root, 'dist', 'server') } = {}) {
  // A first pass, in memory, lists what would be bundled; the packages that must stay whole are
  // then left out of the real build (leaving one out can only drop files from the input list).
  const survey = await build({ ...baseOptions(ALWAYS_EXTERNAL), outdir, write: false, metafile: true });
  const external = [...ALWAYS_EXTERNAL, ...packagesReferringToTheirLocation(Object.keys(survey.metafile.inputs))];
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({ ...baseOptions(external), outdir, sourcemap: 'linked', sourcesContent: false, metafile: true });
  const bundledFiles = Object.keys(result.metafile.inputs).length;
  return { outdir, external, bundledFiles };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outIndex = process.argv.indexOf('--out');
  const outdir = outIndex >= 0 ? resolve(process.argv[outIndex + 1] ?? '') : undefined;
  try {
    const { outdir: written, external, bundledFiles } = await bundleServer({ outdir });
    console.log(`server bundle: ${bundledFiles} files into ${relative(process.cwd(), written) || '.'}/ (loaded from node_modules: ${external.join(', ')})`);
  } catch (error) {
    console.error(`server bundle failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
