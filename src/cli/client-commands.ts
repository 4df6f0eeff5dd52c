/**
 * `gw chat|models|credits` come from the client library (packages/client), loaded by name at run
 * time so the server build does not depend on the client's build order.
 */
export async function runClientCli(argv: string[]): Promise<number> {
  const moduleName = '@gw/client/cli';
  const client = (await import(moduleName)) as {
    runClientCli(argv: readonly string[], io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }): Promise<number>;
  };
  return client.runClientCli(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env });
}
