/**
 * N10: the local stack listens on loopback where its emulators allow it
 * (README.md#set-up): the API with the local Step Functions endpoint and
 * s3rver accept connections on 127.0.0.1 only. DynamoDB Local has no bind
 * address option (its `-help`: only `-port`), so it listens on every
 * interface; that exception is asserted here so the README stays true.
 * Read from the kernel's socket tables (Linux `/proc/net/tcp*`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../infra/local/stack';
import { SPAWNED_READY_MS } from './support/spawned';

/** The IPv4 address of a `/proc/net/tcp` field (hex, little-endian). */
const v4 = (hex: string) => [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');

/** The local addresses of the sockets listening on `port` (state 0A in `/proc/net/tcp` and `/proc/net/tcp6`). */
function listeningAddresses(port: number): string[] {
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue;
      const [address, hexPort] = local.split(':') as [string, string];
      if (parseInt(hexPort, 16) !== port) continue;
      if (address.length === 8) found.push(v4(address));
      else if (/^0+$/.test(address)) found.push('::');
      else if (address === '00000000000000000000000001000000') found.push('::1');
      else if (address.startsWith('0000000000000000FFFF0000')) found.push(`::ffff:${v4(address.slice(24))}`);
      else found.push(address);
    }
  }
  return found.sort();
}

const portOf = (url: string) => Number(new URL(url).port);
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ api: { port: 0 }, webhooks: false });
}, SPAWNED_READY_MS);
afterAll(async () => stack?.stop(), 60_000);

describe.skipIf(!existsSync('/proc/net/tcp'))('the local stack listens on loopback where the emulator allows it (README.md#set-up)', () => {
  it('serves the API and the local Step Functions endpoint on 127.0.0.1 only', () => {
    expect(portOf(stack.endpoints.sfnEndpoint!)).toBe(portOf(stack.api!.url));
    expect(listeningAddresses(portOf(stack.api!.url))).toEqual(['127.0.0.1']);
  });

  it('serves s3rver on 127.0.0.1 only', () => {
    expect(listeningAddresses(portOf(stack.endpoints.s3Endpoint))).toEqual(['127.0.0.1']);
  });

  it('DynamoDB Local, which has no bind address option, listens on every interface (the documented exception)', () => {
    const addresses = listeningAddresses(portOf(stack.endpoints.dynamodbEndpoint));
    expect(addresses.length).toBeGreaterThan(0);
    for (const address of addresses) expect(['0.0.0.0', '::']).toContain(address);
  });
});
