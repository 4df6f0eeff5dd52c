// One measurement with peerbench's own tools: loadgen.mjs (open-loop fixed rate, or streams)
// or wrk (closed-loop max throughput), run pinned on the load CPUs. The gateway's CPU use over
// the measurement is read from /proc, and so is the CPU time the hypervisor took meanwhile.
import { join } from 'node:path';
import { commandCpuSeconds, cpuSeconds, machineTicks, runToEnd, stealPercent } from './processes.mjs';

/**
 * spec: { kind: 'rate'|'stream'|'thr', url, bodyFile, headers, marker, rate?, conns?, concurrency?, minEvents? }
 * settings: { peerDir, loadCpus, durationS, streamDurationS, gatewayPid?, services? }
 * Returns { result (loadgen/wrk JSON or null), gwCpuPct, gwCpuS, wallS, rc, stealPct (the share of
 * all CPUs' time stolen by the hypervisor during the measurement, %) }, and with `services`
 * (command names, e.g. ['redis-server', 'postgres']) their CPU seconds over the measurement by
 * name as `servicesCpuS`.
 */
export async function measure(spec, settings) {
  const { peerDir, loadCpus, durationS, streamDurationS, gatewayPid, services } = settings;
  const cpuBefore = gatewayPid ? cpuSeconds(gatewayPid) : 0;
  const servicesBefore = services?.length ? commandCpuSeconds(services) : undefined;
  const ticksBefore = machineTicks();
  const started = Date.now();
  let run;
  if (spec.kind === 'thr') {
    run = await runToEnd({
      command: 'wrk',
      args: ['-t1', `-c${spec.conns}`, `-d${durationS}s`, '--timeout', '5s', '-s', join(peerDir, 'wrk-post.lua'), spec.url],
      cpus: loadCpus,
      env: { ...process.env, PB_BODY_FILE: spec.bodyFile, PB_HEADERS: spec.headers },
      timeoutMs: (durationS + 30) * 1000,
    });
  } else {
    const common = ['--url', spec.url, '--body-file', spec.bodyFile, '--headers', spec.headers, '--marker', spec.marker, '--warmup', '1'];
    const args =
      spec.kind === 'rate'
        ? ['rate', ...common, '--rate', String(spec.rate), '--duration', String(durationS)]
        : ['stream', ...common, '--concurrency', String(spec.concurrency), '--duration', String(streamDurationS), '--min-events', String(spec.minEvents ?? 1)];
    run = await runToEnd({
      command: process.execPath,
      args: [join(peerDir, 'loadgen.mjs'), ...args],
      cpus: loadCpus,
      timeoutMs: ((spec.kind === 'rate' ? durationS : streamDurationS) + 40) * 1000,
    });
  }
  const wallS = (Date.now() - started) / 1000;
  const gwCpuS = gatewayPid ? cpuSeconds(gatewayPid) - cpuBefore : null;
  const gwCpuPct = gwCpuS === null ? null : Number(((gwCpuS / wallS) * 100).toFixed(1));
  const stealPct = stealPercent(ticksBefore, machineTicks());
  const outcome = { result: parseResult(spec.kind, run.stdout), gwCpuPct, gwCpuS, wallS: Number(wallS.toFixed(2)), rc: run.code, stealPct };
  if (servicesBefore) {
    const servicesAfter = commandCpuSeconds(services);
    outcome.servicesCpuS = Object.fromEntries(services.map((name) => [name, servicesAfter[name] - servicesBefore[name]]));
  }
  return outcome;
}

function parseResult(kind, stdout) {
  const lines = stdout.trim().split('\n');
  const line = kind === 'thr' ? lines.filter((each) => each.startsWith('PB_JSON ')).map((each) => each.slice(8)).at(-1) : lines.at(-1);
  if (!line || !line.startsWith('{')) return null;
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

/** Failed answers of a measurement (must be 0): non-2xx, socket errors, wrong bodies, missing result. */
export function badCount(kind, result) {
  if (!result) return 1;
  if (kind === 'thr') {
    const errors = result.errors;
    return errors.status + errors.connect + errors.read + errors.write + errors.timeout;
  }
  return result.invalid;
}
