import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Server-side request forgery guard for URLs that tenants configure (alert webhooks, Slack/Teams/Jira
 * endpoints, webhook guardrails). SPEC "Events", webhook rules 2-3: HTTPS only, and the host must
 * resolve through public DNS: loopback, private (RFC 1918), carrier-grade NAT (RFC 6598), link-local,
 * unique-local IPv6, unspecified, multicast, broadcast, reserved ranges, IPv4-mapped and
 * IPv4-compatible IPv6 forms, NAT64/6to4/Teredo (which embed IPv4 addresses), and cloud-metadata
 * endpoints are rejected. Every resolved address must pass, not just the first, because the
 * connection may use any of them.
 *
 * Test mode: `allowedHosts` lists `host` or `host:port` entries that skip the address rules (never
 * the HTTPS rule). It is empty by default (config.webhookAllowedHosts).
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SsrfGuardOptions {
  /** Test mode: `host` or `host:port` entries allowed despite the address rules. */
  allowedHosts?: readonly string[];
  /** DNS resolver; defaults to the system resolver (`dns.lookup(host, {all: true})`). */
  lookup?: HostLookup;
}

export interface CheckedUrl {
  url: URL;
  /** True when a test-mode entry let the host through without the address rules. */
  allowedByTestMode: boolean;
  /** The addresses that passed the rules (empty for a test-mode host). */
  addresses: ResolvedAddress[];
}

export interface SsrfGuard {
  /** Parses and checks a URL (scheme, credentials, host, every resolved address). Throws SsrfBlockedError. */
  checkUrl(url: string): Promise<CheckedUrl>;
  /** Whether a test-mode entry covers this URL's host (and port). */
  isAllowedByTestMode(url: URL): boolean;
  /** Resolves a host name and returns its addresses only when every one is public. Throws SsrfBlockedError. */
  resolvePublic(hostname: string): Promise<ResolvedAddress[]>;
}

/** A URL or address the rules reject; `message` names the reason and is safe to show to the channel owner. */
export class SsrfBlockedError extends Error {
  readonly code = 'GW_SSRF_BLOCKED';
  constructor(message: string) {
    super(message);
    this.name = 'SsrfBlockedError';
  }
}

/** Host names that reach cloud instance metadata services without a private-looking address. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);
/** Metadata addresses, named so the error says what they are (their ranges are blocked anyway). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '169.254.170.2', '100.100.100.200']);

/** Why an IP address may not be contacted, or null when it is a public unicast address. */
export function forbiddenAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const parsed = ipaddr.parse(address);
  const normalized = parsed.toString();
  if (METADATA_ADDRESSES.has(normalized)) return `${normalized} is a cloud metadata address`;
  if (parsed.kind() === 'ipv6') {
    const ipv6 = parsed as ipaddr.IPv6;
    if (ipv6.isIPv4MappedAddress()) {
      const embedded = ipv6.toIPv4Address().toString();
      const inner = forbiddenAddressReason(embedded);
      return `${normalized} is an IPv4-mapped IPv6 address${inner ? ` (${inner})` : ''}`;
    }
  }
  const range = parsed.range();
  if (range === 'unicast') {
    // ::/96 (IPv4-compatible, deprecated by RFC 4291) is reported as unicast by ipaddr.js.
    const ipv4Compatible = parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0);
    return ipv4Compatible ? `${normalized} is an IPv4-compatible IPv6 address` : null;
  }
  return `${normalized} is a ${describeRange(range)} address`;
}

function describeRange(range: string): string {
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private (RFC 1918)',
    carrierGradeNat: 'carrier-grade NAT (RFC 6598)',
    linkLocal: 'link-local',
    uniqueLocal: 'unique-local IPv6',
    unspecified: 'unspecified',
    multicast: 'multicast',
    broadcast: 'broadcast',
    reserved: 'reserved',
    rfc6052: 'NAT64 (RFC 6052)',
    rfc6145: 'IPv4-translated (RFC 6145)',
    '6to4': '6to4',
    teredo: 'Teredo',
  };
  return names[range] ?? `non-public (${range})`;
}

const systemLookup: HostLookup = async (hostname) => {
  const results = await dnsLookup(hostname, { all: true, verbatim: true });
  return results.map((result) => ({ address: result.address, family: result.family === 6 ? 6 : 4 }));
};

/** `[::1]` → `::1`; WHATWG URL keeps the brackets of IPv6 literals in `hostname`. */
function bareHostname(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

export function createSsrfGuard(options: SsrfGuardOptions = {}): SsrfGuard {
  const lookup = options.lookup ?? systemLookup;
  const allowed = new Set((options.allowedHosts ?? []).map((entry) => entry.trim().toLowerCase()).filter(Boolean));

  function isAllowedByTestMode(url: URL): boolean {
    if (allowed.size === 0) return false;
    const hostname = url.hostname.toLowerCase();
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return allowed.has(hostname) || allowed.has(`${hostname}:${port}`) || allowed.has(bareHostname(hostname));
  }

  async function resolvePublic(hostname: string): Promise<ResolvedAddress[]> {
    const host = bareHostname(hostname.toLowerCase()).replace(/\.$/, '');
    if (METADATA_HOSTNAMES.has(host)) throw new SsrfBlockedError(`host ${host} is a cloud metadata endpoint`);
    if (isIP(host)) {
      const reason = forbiddenAddressReason(host);
      if (reason) throw new SsrfBlockedError(`address not allowed: ${reason}`);
      return [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
    }
    let addresses: ResolvedAddress[];
    try {
      addresses = await lookup(host);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new SsrfBlockedError(`host ${host} does not resolve${code ? ` (${code})` : ''}`);
    }
    if (addresses.length === 0) throw new SsrfBlockedError(`host ${host} does not resolve`);
    for (const { address } of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) throw new SsrfBlockedError(`host ${host} resolves to a blocked address: ${reason}`);
    }
    return addresses;
  }

  async function checkUrl(rawUrl: string): Promise<CheckedUrl> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new SsrfBlockedError('not a valid URL');
    }
    if (url.protocol !== 'https:') throw new SsrfBlockedError(`URL must use https (got ${url.protocol.replace(':', '')})`);
    if (url.username || url.password) throw new SsrfBlockedError('URL must not contain credentials');
    if (isAllowedByTestMode(url)) return { url, allowedByTestMode: true, addresses: [] };
    return { url, allowedByTestMode: false, addresses: await resolvePublic(url.hostname) };
  }

  return { checkUrl, isAllowedByTestMode, resolvePublic };
}
