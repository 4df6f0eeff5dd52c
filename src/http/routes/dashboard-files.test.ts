import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readDashboardFiles } from './dashboard-files.js';

function builtDashboard(): string {
  const directory = mkdtempSync(join(tmpdir(), 'gw-dashboard-files-'));
  writeFileSync(join(directory, 'index.html'), '<!doctype html>');
  mkdirSync(join(directory, 'assets', 'fonts'), { recursive: true });
  writeFileSync(join(directory, 'assets', 'index-1.css'), 'body{}');
  writeFileSync(join(directory, 'assets', 'fonts', 'a.WOFF2'), Buffer.from([1, 2, 3]));
  writeFileSync(join(directory, 'README'), 'no extension');
  return directory;
}

test('dashboard files: every file under the directory by its URL path, with its type and a content ETag', () => {
  const directory = builtDashboard();
  try {
    const files = readDashboardFiles(directory);
    assert.deepEqual([...files.keys()].sort(), ['README', 'assets/fonts/a.WOFF2', 'assets/index-1.css', 'index.html']);
    assert.equal(files.get('assets/index-1.css')!.contentType, 'text/css; charset=utf-8');
    assert.equal(files.get('assets/fonts/a.WOFF2')!.contentType, 'font/woff2');
    assert.equal(files.get('README')!.contentType, 'application/octet-stream');
    assert.equal(files.get('index.html')!.body.toString(), '<!doctype html>');
    assert.notEqual(files.get('index.html')!.etag, files.get('assets/index-1.css')!.etag);
    assert.equal(readDashboardFiles(directory).get('index.html')!.etag, files.get('index.html')!.etag, 'same bytes, same ETag');
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

test('dashboard files: a directory larger than the limit is refused at start with a message naming it', () => {
  const directory = builtDashboard();
  try {
    assert.throws(() => readDashboardFiles(directory, 10), (error: Error) => error.message.includes(directory) && error.message.includes('GW_DASHBOARD_DIR'));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
