import { setFlagsFromString } from 'node:v8';
import { loadConfig } from './config/load-config.js';
import { createGateway } from './app.js';

// undici parses upstream answers with llhttp compiled to WebAssembly. V8 re-compiles it with its
// optimising compiler on the first upstream call, and that one giant state-machine function takes
// ~35 MB of compiler memory, which the allocator then keeps: the largest single step in gw's
// resident memory. The baseline code parses a response a few microseconds slower. Set here, before
// any upstream connection (the launcher would refuse to start on a Node whose V8 renamed a flag;
// this only warns).
setFlagsFromString('--no-wasm-tier-up');
setFlagsFromString('--no-wasm-dynamic-tiering');

/**
 * Process entry: configuration, the gateway, listen, and a graceful stop on SIGTERM/SIGINT
 * (stop accepting, let in-flight calls and streams finish within GW_SHUTDOWN_GRACE_MS, flush, exit).
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const gateway = await createGateway(config, process.env);
  const address = await gateway.server.listen({ host: config.host, port: config.port });
  const baseUrl = config.publicUrl ?? address;
  const { masterKey, firstKey } = gateway.bootstrap;
  const lines = [`gw listening on ${address}`, `  OpenAI base URL: ${baseUrl}/v1`, `  dashboard:       ${baseUrl}/dashboard`];
  if (config.printCredentials && (masterKey || firstKey)) {
    lines.push('', '  Shown once — store them now:');
    if (masterKey) lines.push(`  admin (master) credential: ${masterKey}`);
    if (firstKey) lines.push(`  first virtual key:         ${firstKey}`);
    lines.push('', `  try: curl ${baseUrl}/v1/chat/completions -H "Authorization: Bearer ${firstKey ?? '<sk-gw-key>'}" \\`);
    lines.push(`         -H 'content-type: application/json' -d '{"model":"local-chat","messages":[{"role":"user","content":"hello"}]}'`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.server.log.info({ signal, inflight: gateway.inflight() }, 'shutting down');
    gateway
      .close()
      .then(() => process.exit(0))
      .catch((error) => {
        gateway.server.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`gw failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
