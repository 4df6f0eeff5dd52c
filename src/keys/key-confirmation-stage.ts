import type { Stage } from '../pipeline/stage.js';

/**
 * Thrown when a call ran on a cached key that turned out to be stale: the HTTP edge authenticates
 * again and runs the call from the start (src/http/inference-handler.ts), so a revoked key is
 * refused and a changed one is served with its new settings. Nothing has been spent or sent
 * upstream at that point.
 */
export class StaleAuthContextError extends Error {
  constructor() {
    super('the cached key was loaded under an older change version');
    this.name = 'StaleAuthContextError';
  }
}

/**
 * Sits right after the rate-limit stage: the shared change version was read while the rate-limit
 * call was in flight, and no stage after this one runs on a key context that is not known to be
 * current (docs/deployment.md, "Revocation across instances").
 */
export function createKeyConfirmationStage(): Stage {
  return {
    name: 'key-confirmation',
    async run(call, next) {
      if (call.authCurrent && !(await call.authCurrent)) throw new StaleAuthContextError();
      return next(call);
    },
  };
}
