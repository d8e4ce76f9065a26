/**
 * Pure rules of webhooks (docs/webhooks.md): the retry schedule covers at least
 * 24 hours, the address rules of the SSRF check, the pinned lookup, the
 * time-ordered delivery IDs and the two-secret signature header.
 */
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newWebhookDeliveryId, newWebhookSecret } from '../../lib/ids';
import { MAX_ATTEMPTS, retryDelaySeconds, scheduleSpanSeconds } from '../../lib/webhooks/schedule';
import { checkWebhookUrl, pinnedLookup, refusedAddress } from '../../lib/webhooks/ssrf';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { signatureHeader } from '../../lib/webhooks/delivery';

describe('retry schedule', () => {
  it('spans at least 24 hours with the default base, jitter only lengthening the waits', () => {
    expect(MAX_ATTEMPTS).toBe(14);
    expect(scheduleSpanSeconds(30)).toBe(95_490); // 26.5 h
    expect(scheduleSpanSeconds(30)).toBeGreaterThanOrEqual(24 * 3600);
    expect([1, 2, 3, 10, 11, 13].map((n) => retryDelaySeconds(n, 30, 0))).toEqual([30, 60, 120, 15_360, 21_600, 21_600]);
    expect(retryDelaySeconds(4, 30, 0.999)).toBeCloseTo(240 * 1.25, 0);
    for (let n = 1; n < MAX_ATTEMPTS; n++) expect(retryDelaySeconds(n, 30)).toBeGreaterThanOrEqual(retryDelaySeconds(n, 30, 0));
  });
});

describe('SSRF address rules', () => {
  it('refuses every non-public range, IPv4 and IPv6, including IPv4-mapped and IPv4-compatible forms', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '0.1.2.3',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd00:ec2::254',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::127.0.0.1',
      '64:ff9b::a00:1',
      '2001:db8::1',
    ]) {
      expect(refusedAddress(address), address).toBeDefined();
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(refusedAddress(address), address).toBeUndefined();
  });

  // ipaddr.js (a test oracle only) names every special range it knows; refusedAddress must refuse them all.
  const ipaddrRanges = (kind: 'ipv4' | 'ipv6') => {
    const ranges = ((kind === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6).prototype as unknown as { SpecialRanges: unknown })
      .SpecialRanges as Record<string, [ipaddr.IPv4 | ipaddr.IPv6, number] | Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>>;
    return Object.entries(ranges).flatMap(([name, value]) =>
      (Array.isArray(value[0])
        ? (value as Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>)
        : [value as [ipaddr.IPv4 | ipaddr.IPv6, number]]
      ).map(([address, prefix]) => ({ name, cidr: `${address.toString()}/${prefix}` })),
    );
  };

  it('refuses the first and last address of every special range ipaddr.js knows', () => {
    const cidrs = [...ipaddrRanges('ipv4'), ...ipaddrRanges('ipv6')];
    expect(cidrs.length).toBeGreaterThan(30);
    for (const { name, cidr } of cidrs) {
      const Kind = cidr.includes(':') ? ipaddr.IPv6 : ipaddr.IPv4;
      for (const edge of [Kind.networkAddressFromCIDR(cidr), Kind.broadcastAddressFromCIDR(cidr)])
        expect(refusedAddress(edge.toString()), `${name} ${cidr}: ${edge.toString()}`).toBeDefined();
    }
  });

  it('accepts an address only where ipaddr.js sees a unicast address (generated IPv4 and IPv6 addresses)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (address) => {
        const range = ipaddr.parse(address).range();
        if (range !== 'unicast') expect(refusedAddress(address), `${address} (${range})`).toBeDefined();
        if (refusedAddress(address) === undefined) expect(range).toBe('unicast');
      }),
      { numRuns: 20_000 },
    );
  });

  it('names the range it refuses, and refuses IPv6 outside global unicast and anything that is not an address', () => {
    expect(refusedAddress('10.1.2.3')).toBe('10.1.2.3 is a private address');
    expect(refusedAddress('169.254.169.254')).toBe('169.254.169.254 is a link-local address');
    expect(refusedAddress('::ffff:8.8.8.8')).toBe('::ffff:8.8.8.8 is an IPv4-mapped address');
    expect(refusedAddress('fd00:ec2::254')).toBe('fd00:ec2::254 is a unique-local address');
    expect(refusedAddress('4000::1')).toBe('4000::1 is outside IPv6 global unicast (2000::/3)');
    for (const address of ['fe80::1%eth0', 'example.com', '1.2.3', ''])
      expect(refusedAddress(address), address).toMatch(/is not an IP address$/);
  });

  it('lets the local stack use http://127.0.0.1 and http://localhost only, and only to loopback', async () => {
    const resolve = async () => [{ address: '127.0.0.1', family: 4 as const }];
    expect(await checkWebhookUrl('http://localhost:4000/x', { allowLocalhost: true, resolve })).toMatchObject({
      ok: true,
      addresses: [{ address: '127.0.0.1' }],
    });
    expect(await checkWebhookUrl('http://127.0.0.1:4000/x', { allowLocalhost: false, resolve })).toEqual({
      ok: false,
      reason: 'must use https',
    });
    expect((await checkWebhookUrl('https://127.0.0.1/x', { allowLocalhost: true, resolve })).ok).toBe(false);
    expect(
      (await checkWebhookUrl('http://localhost/x', { allowLocalhost: true, resolve: async () => [{ address: '10.0.0.1', family: 4 }] })).ok,
    ).toBe(false);
  });

  it('pins connections to the checked addresses whatever name is asked', () => {
    const lookup = pinnedLookup([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    const answers: unknown[] = [];
    lookup('evil.example', { all: true }, (_e, addresses) => answers.push(addresses));
    lookup('evil.example', { family: 6 }, (_e, address, family) => answers.push([address, family]));
    lookup('evil.example', 0 as never, (_e, address) => answers.push(address));
    expect(answers).toEqual([
      [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
      ['2606:2800:220:1::1', 6],
      '93.184.216.34',
    ]);
  });
});

describe('identifiers and signatures', () => {
  it('orders delivery IDs by time', () => {
    const ids = [0, 1, 1_000, 86_400_000, 10 * 365 * 86_400_000].map((offset) =>
      newWebhookDeliveryId(new Date(1_700_000_000_000 + offset)),
    );
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^whd_[1-9A-HJ-NP-Za-km-z]{21}$/);
  });

  it('signs with the previous secret too until its overlap ends', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const at = new Date();
    const body = '{"type":"webhook.test"}';
    const headers = (signature: string) => ({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    });
    const during = signatureHeader(
      { secret: current, previousSecret: previous, previousSecretExpiresAt: new Date(at.getTime() + 1_000).toISOString() },
      'msg_1',
      at,
      body,
    );
    expect(during.split(' ')).toHaveLength(2);
    expect(() => new Webhook(previous).verify(body, headers(during))).not.toThrow();
    const after = signatureHeader(
      { secret: current, previousSecret: previous, previousSecretExpiresAt: new Date(at.getTime() - 1).toISOString() },
      'msg_1',
      at,
      body,
    );
    expect(after.split(' ')).toHaveLength(1);
    expect(() => new Webhook(previous).verify(body, headers(after))).toThrow();
    expect(() => new Webhook(current).verify(body, headers(after))).not.toThrow();
  });
});
