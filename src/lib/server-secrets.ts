import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

/** Keys derived from the one root secret, so operators manage a single value (GW_SECRET). */
export interface ServerSecrets {
  /** HMAC-SHA-256 key for virtual-key hashes. */
  keyHashKey: Buffer;
  /** AES-256-GCM key for credentials stored in the database. */
  encryptionKey: Buffer;
  /** HMAC key for dashboard session and CSRF tokens. */
  sessionKey: Buffer;
  /** True when the root secret was generated into the data directory on this start. */
  generated: boolean;
}

/**
 * Uses GW_SECRET when set. Otherwise (embedded default) keeps a generated secret in
 * `<dataDir>/secret` with mode 0600; several instances must share GW_SECRET instead.
 */
export function loadServerSecrets(secret: string | undefined, dataDir: string): ServerSecrets {
  let root = secret;
  let generated = false;
  if (!root) {
    const path = join(dataDir, 'secret');
    if (existsSync(path)) {
      root = readFileSync(path, 'utf8').trim();
    } else {
      mkdirSync(dataDir, { recursive: true });
      root = randomBytes(32).toString('base64url');
      writeFileSync(path, `${root}\n`, { mode: 0o600 });
      generated = true;
    }
  }
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', root, 'gw', purpose, 32));
  return {
    keyHashKey: derive('virtual-key-hash'),
    encryptionKey: derive('credential-encryption'),
    sessionKey: derive('dashboard-session'),
    generated,
  };
}
