/**
 * Where webhooks may be sent (docs/webhooks.md; SSRF protection): `https` only,
 * and only to public unicast addresses. A URL is checked when its endpoint is
 * created and again at every attempt, on every address its host resolves to;
 * the attempt then connects to the very addresses checked
 * ({@link pinnedLookup}), so a DNS answer that changes in between (DNS
 * rebinding) cannot reach a private address.
 *
 * The ranges are the IANA IPv4 and IPv6 Special-Purpose Address Registries'
 * blocks that are not globally reachable, plus a few globally reachable
 * special-purpose blocks refused wholesale (AS112 and AMT anycast, the rest
 * of 2001::/23), multicast, 240/4 and every IPv6 address outside global
 * unicast (2000::/3), matched with Node's `net.BlockList`
 * ({@link REFUSED_RANGES}). An address Node cannot parse is refused. So loopback, private (10/8,
 * 172.16/12, 192.168/16), link-local (169.254/16 — the metadata service
 * 169.254.169.254 —, fe80::/10), unique-local (fc00::/7, with
 * fd00:ec2::254), CGNAT (100.64/10), 0/8, broadcast, documentation and
 * benchmarking ranges are refused, and so are the IPv6 forms that embed an
 * IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64
 * 64:ff9b::/96, 6to4, Teredo). `test/unit/webhooks.test.ts` checks the
 * table against ipaddr.js's range names on generated addresses.
 */
import { lookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP, SocketAddress } from 'node:net';

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

/** Host names the local stack may use over plain HTTP when localhost is allowed (docs/webhooks.md). */
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost']);

/** What a loopback address is called in {@link REFUSED_RANGES} (the local stack's webhooks go there). */
const LOOPBACK = 'a loopback address';

/**
 * The address blocks a webhook may not reach, by what an address in them is
 * (`a private address`). The order only decides an address's name (the
 * first entry holding it names it), e.g. `::1` is a loopback address rather
 * than an IPv4-compatible one. The IANA IPv4 and IPv6 Special-Purpose
 * Address Registries' blocks that are not globally reachable, plus the
 * globally reachable AS112/AMT anycast blocks and all of 2001::/23,
 * multicast, 240/4, and IPv6 outside global unicast (2000::/3).
 */
export const REFUSED_RANGES: ReadonlyArray<readonly [what: string, cidrs: readonly string[]]> = [
  ['an unspecified address', ['0.0.0.0/8', '::/128']],
  [LOOPBACK, ['127.0.0.0/8', '::1/128']],
  ['an IPv4-mapped address', ['::ffff:0:0/96']],
  ['an IPv4-compatible address', ['::/96']],
  ['a private address', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['a carrier-grade NAT address', ['100.64.0.0/10']],
  ['a link-local address', ['169.254.0.0/16', 'fe80::/10']],
  ['a unique-local address', ['fc00::/7']],
  ['a multicast address', ['224.0.0.0/4', 'ff00::/8']],
  ['the broadcast address', ['255.255.255.255/32']],
  ['a documentation address', ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32', '3fff::/20']],
  ['a benchmarking address', ['198.18.0.0/15', '2001:2::/48']],
  ['a NAT64 address', ['64:ff9b::/96', '64:ff9b:1::/48']],
  ['a 6to4 address', ['192.88.99.0/24', '2002::/16']],
  ['a Teredo address', ['2001::/32']],
  ['a discard-only address', ['100::/64']],
  ['an AS112 or AMT anycast address', ['192.31.196.0/24', '192.175.48.0/24', '192.52.193.0/24', '2620:4f:8000::/48']],
  ['a reserved address', ['192.0.0.0/24', '240.0.0.0/4', '2001::/23', '5f00::/16']],
  ['outside IPv6 global unicast (2000::/3)', ['::/3', '4000::/2', '8000::/1']],
];

/**
 * The blocks of each entry, one BlockList per family: an address is matched
 * against the blocks of its own family only (BlockList would otherwise match
 * an IPv4-mapped IPv6 address against IPv4 blocks, and name it by those).
 * Built on first use.
 */
let refusedBlocks: Array<{ what: string; byFamily: Record<4 | 6, BlockList> }> | undefined;
const blocks = () =>
  (refusedBlocks ??= REFUSED_RANGES.map(([what, cidrs]) => {
    const byFamily = { 4: new BlockList(), 6: new BlockList() };
    for (const cidr of cidrs) {
      const [network, prefix] = cidr.split('/') as [string, string];
      const family = isIP(network) === 6 ? 6 : 4;
      byFamily[family].addSubnet(network, Number(prefix), family === 6 ? 'ipv6' : 'ipv4');
    }
    return { what, byFamily };
  }));

/** The family of an IP address literal without a zone ID (`fe80::1%eth0` is none), or undefined when it is not one. */
const familyOf = (address: string): 4 | 6 | undefined => {
  if (address.includes('%')) return undefined;
  const family = isIP(address);
  return family === 4 || family === 6 ? family : undefined;
};

/**
 * Which entry of {@link REFUSED_RANGES} holds an address: its `what`, `null`
 * for a public unicast address, `undefined` for a string that is not an IP
 * address. The address is parsed once, by the same parser BlockList matches
 * with (a string BlockList could not parse would match nothing: it fails
 * closed here instead).
 */
function rangeOf(address: string): string | null | undefined {
  const family = familyOf(address);
  if (!family) return undefined;
  let parsed: SocketAddress;
  try {
    parsed = new SocketAddress({ address, family: family === 6 ? 'ipv6' : 'ipv4' });
  } catch {
    return undefined;
  }
  return blocks().find(({ byFamily }) => byFamily[family].check(parsed))?.what ?? null;
}

/** Why an address is refused (`10.0.0.1 is a private address`), or undefined when it is a public unicast address. */
export function refusedAddress(address: string): string | undefined {
  const what = rangeOf(address);
  if (what === undefined) return `"${address}" is not an IP address`;
  return what === null ? undefined : `${address} is ${what}`;
}

/** Outcome of {@link checkWebhookUrl}: the URL and the addresses to connect to, or why it is refused. */
export type UrlCheck = { ok: true; url: URL; addresses: ResolvedAddress[] } | { ok: false; reason: string };

/**
 * Checks a webhook URL and resolves its host (docs/webhooks.md).
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
    return {
      ok: false,
      reason: options.allowLocalhost ? 'must use https (http only to 127.0.0.1 or localhost on the local stack)' : 'must use https',
    };
  }
  let addresses: ResolvedAddress[];
  const literal = familyOf(host);
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch (error) {
      return { ok: false, reason: `its host does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})` };
    }
    if (addresses.length === 0) return { ok: false, reason: 'its host does not resolve' };
  }
  if (local) {
    const loopback = addresses.filter((entry) => rangeOf(entry.address) === LOOPBACK);
    return loopback.length > 0
      ? { ok: true, url, addresses: loopback }
      : { ok: false, reason: `${host} does not resolve to a loopback address` };
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
  return (
    _hostname: string,
    options: LookupOptions | number | undefined,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const family: unknown = typeof options === 'number' ? options : options?.family;
    const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    const candidates = wanted === 0 ? [...addresses] : addresses.filter((entry) => entry.family === wanted);
    const usable = candidates.length > 0 ? candidates : [...addresses];
    if (typeof options === 'object' && options?.all)
      callback(
        null,
        usable.map((entry) => ({ address: entry.address, family: entry.family })),
      );
    else callback(null, usable[0]!.address, usable[0]!.family);
  };
}
