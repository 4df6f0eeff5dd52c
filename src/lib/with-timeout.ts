/**
 * The promise's outcome, or a rejection with `message` once `timeoutMs` pass first. The timer is
 * cleared either way, so a call that answers in time leaves nothing behind. Used where a shared
 * store (Redis) must fail fast instead of holding a request.
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
