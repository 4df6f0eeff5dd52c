import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

// scripts/bundle-server.mjs decides which packages stay out of the server bundle from the files
// it would bundle; these are the two pure steps of that decision.
const bundler = pathToFileURL(join(import.meta.dirname, '../../scripts/bundle-server.mjs')).href;
const { topLevelPackage, packagesReferringToTheirLocation } = (await import(bundler)) as {
  topLevelPackage(path: string): string | undefined;
  packagesReferringToTheirLocation(paths: string[], readSource: (path: string) => string): string[];
};

test('a bundled file belongs to the outermost package under node_modules (scoped names whole)', () => {
  assert.equal(topLevelPackage('node_modules/ioredis/built/utils/index.js'), 'ioredis');
  assert.equal(topLevelPackage('node_modules/@fastify/swagger/lib/util/read-package-json.js'), '@fastify/swagger');
  // A nested copy is reached through the package that holds it: only that name resolves from the bundle to these files.
  assert.equal(topLevelPackage('node_modules/json-schema-resolver/node_modules/fast-uri/index.js'), 'json-schema-resolver');
  assert.equal(topLevelPackage('src/main.ts'), undefined);
});

test('packages with a file that refers to its own location stay out; the gateway’s own files never count', () => {
  const sources: Record<string, string> = {
    'node_modules/reads-beside/lib/a.js': 'module.exports = 1;',
    'node_modules/reads-beside/lib/b.js': 'const file = require("path").join(__dirname, "..", "package.json");',
    'node_modules/@scope/meta/index.js': 'export const here = new URL(".", import.meta.url);',
    'node_modules/resolves/index.js': 'const worker = require.resolve("./worker.js");',
    'node_modules/named/index.js': 'module.exports = { file: __filename };',
    'node_modules/plain/index.js': 'export const dirname = "not a reference: __dirnames";',
    'src/db/database-worker.ts': 'new URL("./x.js", import.meta.url);',
  };
  assert.deepEqual(packagesReferringToTheirLocation(Object.keys(sources), (path) => sources[path]!), ['@scope/meta', 'named', 'reads-beside', 'resolves']);
});
