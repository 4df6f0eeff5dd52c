import { withAdmissionCheck } from '../pipeline/admission.js';
import type { Stage } from '../pipeline/stage.js';

/**
 * Thrown when a call ran on a cached key that turned out to be stale: the HTTP edge authenticates
 * again and runs the call from the start (src/http/inference-handler.ts), so a revoked key is
 * refused and a changed one is served with its new settings. Nothing has been spent or sent
 * upstream at that point (a credit hold sent alongside is released).
 */
export class StaleAuthContextError extends Error {
  constructor() {
    super('the cached key was loaded under an older change version');
    this.name = 'StaleAuthContextError';
  }
}

function confirm(current: boolean): void {
  if (!current) throw new StaleAuthContextError();
}

/**
 * The first stage: when the instance has no recent confirmation of the shared change version
 * (lib/change-feed.ts, `confirmedVersion`), the version is being read while the call goes on (its rate-limit
 * call is sent meanwhile), and the call is not admitted until the cached key is known to be current
 * (pipeline/admission.ts; docs/deployment.md, "Revocation across instances"). Being first, a stale
 * key wins over any other refusal.
 */
export function createKeyConfirmationStage(): Stage {
  return {
    name: 'key-confirmation',
    run(call, next) {
      if (!call.authCurrent) return next(call);
      return next(withAdmissionCheck(call, call.authCurrent.then(confirm)));
    },
  };
}
