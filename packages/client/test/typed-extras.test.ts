import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import ts from 'typescript';

test('the compiler accepts the typed gw_* fields and rejects wrong ones', () => {
  const fixture = fileURLToPath(new URL('./fixtures/typed-extras.ts', import.meta.url));
  const program = ts.createProgram([fixture], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
    const file = diagnostic.file ? diagnostic.file.fileName.split('/').slice(-2).join('/') : '';
    return `${file}:${where ? where.line + 1 : '?'} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
  assert.deepEqual(diagnostics, []);
});
