// Child processes for the benchmark: started pinned to CPUs (taskset), tracked by PID, stopped
// only by their PID. Memory and CPU are read from /proc, summed over the process tree.
import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Starts `command args` (pinned to `cpus` when given and taskset exists), its output appended to
 * `logFile`. Returns { pid, child, output(), exited }. The child is a group leader so that a
 * wrapper (taskset) and what it runs are stopped together.
 */
export function startProcess({ command, args = [], cpus, env = process.env, cwd = process.cwd(), logFile }) {
  const pinned = cpus !== undefined && cpus !== '' && hasTaskset;
  const file = pinned ? 'taskset' : command;
  const argv = pinned ? ['-c', String(cpus), command, ...args] : args;
  const child = spawn(file, argv, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const log = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined;
  let captured = '';
  const keep = (chunk) => {
    log?.write(chunk);
    // Only the start of the output is kept in memory (it holds the listen address).
    if (captured.length < 64 * 1024) captured += chunk.toString('utf8');
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    log?.end();
    resolve({ code, signal });
  }));
  return { pid: child.pid, child, output: () => captured, exited };
}

/** Sends SIGTERM to the process (and its group, which only holds what it started), then SIGKILL after `graceMs`. */
export async function stopProcess(handle, graceMs = 15_000) {
  if (!handle || handle.child.exitCode !== null || handle.child.signalCode !== null) return;
  const signalGroup = (signal) => {
    try {
      process.kill(-handle.pid, signal);
    } catch {
      try {
        process.kill(handle.pid, signal);
      } catch {
        // already gone
      }
    }
  };
  signalGroup('SIGTERM');
  const done = await Promise.race([handle.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    signalGroup('SIGKILL');
    await handle.exited;
  }
}

export function portOpen(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Waits until the process prints `gw listening on http://host:port`, or until `port` accepts connections. */
export async function waitForListening(handle, { port, timeoutMs = 60_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (handle.child.exitCode !== null || handle.child.signalCode !== null) {
      throw new Error(`process exited before listening: ${handle.output().slice(-1500)}`);
    }
    const match = /listening on http:\/\/[^:\s]+:(\d+)/.exec(handle.output());
    if (match) return Number(match[1]);
    if (port && (await portOpen(port))) return port;
    await sleep(100);
  }
  throw new Error(`not listening after ${timeoutMs} ms: ${handle.output().slice(-1500)}`);
}

/** The PID and all its descendants (from /proc). */
export function treePids(pid) {
  const children = new Map();
  for (const line of execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    if (!child) continue;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(child);
  }
  const all = [pid];
  for (let index = 0; index < all.length; index++) all.push(...(children.get(all[index]) ?? []));
  return all;
}

/** A /proc/<pid>/status field in kB (VmRSS, VmHWM), summed over the process tree. */
export function memoryKb(pid, field) {
  let total = 0;
  for (const each of treePids(pid)) {
    const path = `/proc/${each}/status`;
    if (!existsSync(path)) continue;
    const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(path, 'utf8'));
    if (match) total += Number(match[1]);
  }
  return total;
}

/** utime + stime of the process tree, in seconds. */
export function cpuSeconds(pid) {
  let ticks = 0;
  for (const each of treePids(pid)) {
    const path = `/proc/${each}/stat`;
    if (!existsSync(path)) continue;
    const fields = readFileSync(path, 'utf8').replace(/^.*\) /, '').split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / clockTicksPerSecond();
}

/**
 * utime + stime in seconds, by command name, of every process whose name (/proc/<pid>/comm, as in
 * /proc/<pid>/stat) is one of `names`: the shared servers (redis-server, postgres and its
 * backends) whose CPU a call in Postgres + Redis mode costs besides the gateway's own. Processes
 * that end while being read are skipped; one that ends between two readings takes its CPU with it
 * (the gateway's pool keeps its Postgres connections, so their backends, open throughout).
 */
export function commandCpuSeconds(names) {
  const totals = Object.fromEntries(names.map((name) => [name, 0]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const nameEnd = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, nameEnd);
    if (!Object.hasOwn(totals, name)) continue;
    const fields = stat.slice(nameEnd + 2).split(' ');
    totals[name] += Number(fields[11]) + Number(fields[12]);
  }
  const perSecond = clockTicksPerSecond();
  for (const name of names) totals[name] /= perSecond;
  return totals;
}

let ticksPerSecond;
function clockTicksPerSecond() {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

/** Runs a command to completion (pinned), returns its stdout. Bounded by `timeoutMs`. */
export async function runToEnd({ command, args = [], cpus, env = process.env, cwd, timeoutMs = 120_000 }) {
  const handle = startProcess({ command, args, cpus, env, cwd });
  let stdout = '';
  handle.child.stdout.on('data', (chunk) => {
    stdout += chunk.toString('utf8');
  });
  const timer = setTimeout(() => void stopProcess(handle, 2000), timeoutMs);
  const { code } = await handle.exited;
  clearTimeout(timer);
  return { code, stdout, output: handle.output() };
}

/**
 * Busy, stolen and total jiffies of the whole machine (every CPU) from /proc/stat's first line, or
 * from that line as given (a copy saved earlier).
 */
export function machineTicks(statLine = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]) {
  const fields = statLine.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th; the rest (user, nice, system, irq, softirq, steal) is work.
  // steal (the 8th) is time a virtual CPU was ready to run but the hypervisor ran something else.
  return { busy: total - fields[3] - (fields[4] ?? 0), steal: fields[7] ?? 0, total };
}

/** The share of all CPUs' time the hypervisor took between two readings of machineTicks, in % (null when no time passed). */
export function stealPercent(before, after) {
  const total = after.total - before.total;
  return total > 0 ? Number((((after.steal - before.steal) / total) * 100).toFixed(1)) : null;
}

/**
 * Waits until the machine is quiet: the share of all CPUs busy over one `sampleMs` sample is below
 * `busyBelow`, or `maxMs` has passed. What the previous measurement left behind (the database
 * server absorbing a burst of batched inserts, a write-ahead-log checkpoint) otherwise runs during
 * the next one and lands in its latency tail, whichever gateway or mode that is.
 * Returns { waitedMs, busy (the last sample's share), quiet }.
 */
export async function waitForQuiet({ busyBelow = 0.1, sampleMs = 250, maxMs = 15_000 } = {}) {
  const started = Date.now();
  for (;;) {
    const before = machineTicks();
    await sleep(sampleMs);
    const after = machineTicks();
    const busy = after.total > before.total ? (after.busy - before.busy) / (after.total - before.total) : 0;
    const waitedMs = Date.now() - started;
    if (busy < busyBelow || waitedMs >= maxMs) return { waitedMs, busy: Number(busy.toFixed(3)), quiet: busy < busyBelow };
  }
}
