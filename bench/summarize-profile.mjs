#!/usr/bin/env node
// Summarises a V8 .cpuprofile (from `node --cpu-prof`): top functions by self time, and the
// same grouped by source file, so a profile can be read without a flame-graph viewer.
//
//   node bench/summarize-profile.mjs FILE.cpuprofile [--top 30] [--last SECONDS] [--json]
import { readFileSync } from 'node:fs';

/**
 * Self time per profile node from the sample list (sample i lasts timeDeltas[i + 1]). With
 * `lastSeconds`, only the samples of the profile's final seconds count (the load, not start-up).
 */
function selfTimes(profile, lastSeconds) {
  const self = new Map();
  const { samples, timeDeltas } = profile;
  const from = lastSeconds ? profile.endTime - lastSeconds * 1e6 : -Infinity;
  let at = profile.startTime;
  for (let index = 0; index < samples.length; index++) {
    at += timeDeltas[index] ?? 0;
    if (at < from) continue;
    const delta = timeDeltas[index + 1] ?? 0;
    self.set(samples[index], (self.get(samples[index]) ?? 0) + delta);
  }
  return self;
}

function shortUrl(url) {
  if (!url) return '(native)';
  const withoutScheme = url.replace(/^file:\/\//, '');
  const modules = withoutScheme.lastIndexOf('node_modules/');
  if (modules >= 0) return withoutScheme.slice(modules + 'node_modules/'.length);
  const dist = withoutScheme.indexOf('/dist/');
  if (dist >= 0) return withoutScheme.slice(dist + 1);
  return withoutScheme.replace(/^node:/, 'node:');
}

/** Top functions and files by self time. Returns { totalMs, functions, files }. */
export function summarizeProfile(profile, top = 30, lastSeconds = 0) {
  const self = selfTimes(profile, lastSeconds);
  let totalUs = 0;
  const byFunction = new Map();
  const byFile = new Map();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    totalUs += us;
    if (us === 0) continue;
    const frame = node.callFrame;
    const file = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
  }
  const rank = (map) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Number((us / 1000).toFixed(1)), pct: Number(((us / totalUs) * 100).toFixed(1)) }));
  return { totalMs: Number((totalUs / 1000).toFixed(1)), functions: rank(byFunction), files: rank(byFile) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: summarize-profile.mjs FILE.cpuprofile [--top N] [--json]');
    process.exit(2);
  }
  const topIndex = process.argv.indexOf('--top');
  const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 30;
  const lastIndex = process.argv.indexOf('--last');
  const last = lastIndex > 0 ? Number(process.argv[lastIndex + 1]) : 0;
  const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')), top, last);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(summary, null, 2));
  } else {
    console.log(`total sampled: ${summary.totalMs} ms`);
    console.log('\ntop functions by self time:');
    for (const entry of summary.functions) console.log(`${String(entry.pct).padStart(5)}%  ${String(entry.ms).padStart(8)} ms  ${entry.name}`);
    console.log('\ntop files by self time:');
    for (const entry of summary.files) console.log(`${String(entry.pct).padStart(5)}%  ${String(entry.ms).padStart(8)} ms  ${entry.name}`);
  }
}
