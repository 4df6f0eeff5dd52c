import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * Starts `src/main.ts` as a separate process (as `npm start` would) and waits until it listens;
 * with `entry`, a built JavaScript entry instead (the server bundle), run as it is.
 */
export async function spawnGateway(environment: Record<string, string>, timeoutMs = 30_000, entry?: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, entry === undefined ? ['--import', 'tsx', MAIN] : [entry], {
    env: { ...process.env, GW_HOST: '127.0.0.1', GW_PORT: '0', GW_LOG_LEVEL: 'warn', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${output}`)), timeoutMs);
    const check = () => {
      const match = /gw listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => reject(new Error(`gateway exited: ${output}`)));
  });
  return {
    child,
    url,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
