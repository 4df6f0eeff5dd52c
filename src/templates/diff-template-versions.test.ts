import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffTemplateVersions } from './diff-template-versions.js';

test('a unified diff of two versions shows changed lines', async () => {
  const base = { templateId: 't', messages: [{ role: 'system' as const, content: 'Be {{ tone }}.' }], model: null, parameters: null, createdAt: 0 };
  const diff = await diffTemplateVersions('support', { ...base, version: 1 }, { ...base, version: 2, model: 'gpt-4o', messages: [{ role: 'system', content: 'Be {{ tone }} and brief.' }] });
  assert.match(diff, /^--- support@v1/m);
  assert.match(diff, /^\+\+\+ support@v2/m);
  assert.match(diff, /^-Be \{\{ tone \}\}\.$/m);
  assert.match(diff, /^\+Be \{\{ tone \}\} and brief\.$/m);
  assert.match(diff, /^\+model: gpt-4o$/m);
});
