/**
 * Where webhooks may be sent (decisions §12; SSRF protection): `https` only,
 * and only to public unicast addresses. A URL is checked when its endpoint is
 * created and again at every attempt, on every address its host resolves to;
 * the attempt then connects to the very addresses checked
 * ({@link pinnedLookup}), so a DNS answer that changes in between (DNS
 * rebinding) cannot reach a private address.
 *
 * Ranges come from ipaddr.js: an address passes only when its range is
 * `unicast`, which refuses loopback, private (10/8, 172.16/12, 192.168/16),
 * link-local (169.254/16 — the metadata service 169.254.169.254 —, fe80::/10),
 * unique-local (fc00::/7, with fd00:ec2::254), CGNAT (100.64/10), 0/8,
 * multicast, broadcast, reserved and documentation ranges, and the IPv6
 * forms that embed an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64
 * 64:ff9b::/96, 6to4, Teredo); IPv4-compatible ::/96 is refused explicitly.
 */
import { lookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** One resolved address of a host. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (injectable: tests resolve names to chosen addresses). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo, every address, in the resolver's order). */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));

/** Host names the local stack may use over plain HTTP when localhost is allowed (decisions §12). */
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost']);

/** Why an address is refused, or undefined when it is a public unicast address. */
export function refusedAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return `${address} is an IPv4-mapped address (${v6.toIPv4Address().toString()})`;
    if (range === 'unicast' && v6.match(ipaddr.IPv6.parse('::'), 96)) return `${address} is an IPv4-compatible address`;
  }
  return range === 'unicast' ? undefined : `${address} is a ${range} address`;
}

/** Outcome of {@link checkWebhookUrl}: the URL and the addresses to connect to, or why it is refused. */
export type UrlCheck = { ok: true; url: URL; addresses: ResolvedAddress[] } | { ok: false; reason: string };

/**
 * Checks a webhook URL and resolves its host (decisions §12).
 *
 * @param options.allowLocalhost - the local stack's setting: `http://127.0.0.1`
 *   and `http://localhost` (resolved to loopback addresses only) are allowed too.
 * @param options.resolve - the resolver (default: the system's).
 * @returns the addresses an attempt must connect to, or the reason for refusal.
 */
export async function checkWebhookUrl(raw: string, options: { allowLocalhost: boolean; resolve?: Resolver }): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  // WHATWG URL keeps IPv6 literals in brackets.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const local = options.allowLocalhost && LOCAL_HOSTS.has(host) && url.protocol === 'http:';
  if (url.protocol !== 'https:' && !local) {
    return { ok: false, reason: options.allowLocalhost ? 'must use https (http only to 127.0.0.1 or localhost on the local stack)' : 'must use https' };
  }
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch (error) {
      return { ok: false, reason: `its host does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})` };
    }
    if (addresses.length === 0) return { ok: false, reason: 'its host does not resolve' };
  }
  if (local) {
    const loopback = addresses.filter((entry) => ipaddr.isValid(entry.address) && ipaddr.parse(entry.address).range() === 'loopback');
    return loopback.length > 0 ? { ok: true, url, addresses: loopback } : { ok: false, reason: `${host} does not resolve to a loopback address` };
  }
  for (const entry of addresses) {
    const refused = refusedAddress(entry.address);
    if (refused) return { ok: false, reason: `resolves to a refused address: ${refused}` };
  }
  return { ok: true, url, addresses };
}

/**
 * A `lookup` for node:http/https/net that answers only `addresses` (checked
 * by {@link checkWebhookUrl}) whatever name it is asked: the connection goes
 * to the address that was checked, while the Host header and TLS SNI keep the
 * URL's host name.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  return (_hostname: string, options: LookupOptions | number | undefined, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    const family: unknown = typeof options === 'number' ? options : options?.family;
    const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    const candidates = wanted === 0 ? [...addresses] : addresses.filter((entry) => entry.family === wanted);
    const usable = candidates.length > 0 ? candidates : [...addresses];
    if (typeof options === 'object' && options?.all) callback(null, usable.map((entry) => ({ address: entry.address, family: entry.family })));
    else callback(null, usable[0]!.address, usable[0]!.family);
  };
}
