import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  caPem: string;
  caFile: string;
  key: string;
  cert: string;
  remove(): void;
}

/** A throw-away CA and a server certificate for 127.0.0.1/localhost, made with openssl in a temp dir. */
export function createTestCertificates(): TestCertificates {
  const directory = mkdtempSync(join(tmpdir(), 'gw-alerts-tls-'));
  const path = (name: string) => join(directory, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path('ca.key'));
  openssl('req', '-x509', '-new', '-key', path('ca.key'), '-out', path('ca.pem'), '-days', '2', '-subj', '/CN=gw alerts test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path('server.key'));
  openssl('req', '-new', '-key', path('server.key'), '-out', path('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(path('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', path('server.csr'), '-CA', path('ca.pem'), '-CAkey', path('ca.key'), '-CAcreateserial',
    '-out', path('server.pem'), '-days', '2', '-extfile', path('server.ext'));
  return {
    caPem: readFileSync(path('ca.pem'), 'utf8'),
    caFile: path('ca.pem'),
    key: readFileSync(path('server.key'), 'utf8'),
    cert: readFileSync(path('server.pem'), 'utf8'),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
