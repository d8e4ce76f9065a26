/**
 * The BatchGetItem parsed outside the SDK (lib/db/raw-read.ts `batchGetRaw`): the history's bucket reads
 * (docs/data-model.md "Recency and CRM targets", its paragraph "Reads: what they cost in CPU") and the workflow's
 * warehouse contacts (docs/data-model.md "Warehouse reads"): the items it parses itself are those the SDK's own
 * BatchGetItem returns, across several calls, with absent keys and with lists of maps, and an error answer still
 * throws as the SDK throws it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { batchDelete, batchGet, batchPut } from '../lib/db/batch';
import { batchGetRaw } from '../lib/db/raw-read';
import { loggingClient } from './support/logging-client';

describe('BatchGetItem parsed outside the SDK (lib/db/raw-read.ts)', () => {
  it('returns lists and maps (warehouse contacts) as the DocumentClient does, numbers, nulls and booleans included', async () => {
    const prefix = `RAWREAD#${randomUUID()}`;
    const stored = Array.from({ length: 120 }, (_, i) => ({
      pk: `${prefix}#${i}`,
      sk: 'CONTACTS',
      accountId: `acc_${i}`,
      contacts: Array.from({ length: i % 4 }, (_, c) => ({
        contactId: `con_${i}_${c}`,
        email: c % 2 === 0 ? `ann.${i}.${c}@example.com` : null,
        seniority: c,
        verified: c % 3 === 0,
        tags: ['a', `é${c}`],
      })),
    }));
    await batchPut(ddb, config.tableName, stored);
    const keys = Array.from({ length: 130 }, (_, i) => ({ pk: `${prefix}#${i}`, sk: 'CONTACTS' }));
    const raw = await batchGetRaw(ddb, config.tableName, keys, ['accountId', 'contacts']);
    const sdk = await batchGet(ddb, config.tableName, keys, ['accountId', 'contacts']);
    expect(raw).toHaveLength(120);
    const fromSdk = new Map(sdk.map((item) => [String(item.pk), item]));
    for (const item of raw) {
      const expected = fromSdk.get(String(item.pk))!;
      expect(item).toEqual({ pk: expected.pk, accountId: expected.accountId, contacts: expected.contacts });
    }
    expect(raw.find((item) => item.pk === `${prefix}#7`)?.contacts).toEqual(stored[7]!.contacts);
    await batchDelete(
      ddb,
      config.tableName,
      stored.map(({ pk, sk }) => ({ pk, sk })),
    );
  });

  it('converts any list or map as the SDK does: unicode and empty strings, nulls, booleans, numbers past 2^53, nesting', async () => {
    // Values a list or map can hold (sets and binaries are left to `unmarshall` itself, so only their nesting is drawn).
    // fast-check draws `__proto__` as a key now and then; the SDK's marshaller cannot store it (an empty attribute
    // value, refused), so it is left to the crafted answer of the test below.
    const memberName = fc.string({ minLength: 1 }).filter((name) => name !== '__proto__');
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string({ unit: 'grapheme' }),
        fc.string(),
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        // DynamoDB's numbers: magnitudes from 1e-130; the SDK writes doubles only up to 2^53 (larger: the bigints).
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -9e15, max: 9e15 }).filter((n) => n === 0 || Math.abs(n) > 1e-100),
        fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(memberName, tie('value'), { maxKeys: 4 }),
      ),
    }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.dictionary(memberName, value, { maxKeys: 6 }), { maxLength: 5 }), {
          minLength: 1,
          maxLength: 8,
        }),
        async (lists) => {
          const prefix = `RAWREAD#${randomUUID()}`;
          const stored = lists.map((contacts, i) => ({ pk: `${prefix}#${i}`, sk: 'CONTACTS', contacts, nested: { contacts } }));
          await batchPut(ddb, config.tableName, stored);
          const keys = stored.map(({ pk, sk }) => ({ pk, sk }));
          const raw = await batchGetRaw(ddb, config.tableName, keys, ['contacts', 'nested']);
          const fromSdk = new Map((await batchGet(ddb, config.tableName, keys, ['contacts', 'nested'])).map((item) => [item.pk, item]));
          expect(raw).toHaveLength(stored.length);
          for (const item of raw) {
            const expected = fromSdk.get(item.pk)!;
            expect(item).toStrictEqual({ pk: expected.pk, contacts: expected.contacts, nested: expected.nested });
          }
          await batchDelete(ddb, config.tableName, keys);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("drops a map member named __proto__ as the SDK does, so a stored map cannot set a contact's prototype", async () => {
    // The SDK cannot write such a member (its marshaller drops it), so the answer is crafted: a 200 whose contact map
    // holds `__proto__` with an `email`, served to both readers by one request handler.
    const body = Buffer.from(
      '{"Responses":{"t":[{"pk":{"S":"p"},"contacts":{"L":[{"M":{"contactId":{"S":"con_1"},"__proto__":{"M":{"email":{"S":"planted@example.com"}}}}}]}}]},"UnprocessedKeys":{}}',
    );
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        region: 'us-east-1',
        endpoint: 'http://localhost:1',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
        requestHandler: {
          handle: async () => ({
            response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([body]) },
          }),
          updateHttpClientConfig() {},
          httpHandlerConfigs: () => ({}),
        } as never,
      }),
    );
    const keys = [{ pk: 'p', sk: 'CONTACTS' }];
    const [raw] = await batchGetRaw(client, 't', keys, ['contacts']);
    const sdk = await client.send(new BatchGetCommand({ RequestItems: { t: { Keys: keys } } }));
    const read = (raw!.contacts as Record<string, unknown>[])[0]!;
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(read.email).toBeUndefined();
    expect(read).toStrictEqual({ contactId: 'con_1' });
    expect(sdk.Responses!.t![0]!.contacts).toStrictEqual([read]);
  });

  it('returns what the SDK returns for 250 keys over three calls, absent keys left out, binary attributes byte for byte', async () => {
    const prefix = `RAWREAD#${randomUUID()}`;
    const stored = Array.from({ length: 200 }, (_, i) => ({
      pk: `${prefix}#${i}`,
      sk: 'HISTORY',
      entries: randomBytes(1 + (i % 900)),
      depth: i % 17,
      version: i,
      type: 'rawReadTest',
    }));
    await batchPut(ddb, config.tableName, stored);
    const keys = Array.from({ length: 250 }, (_, i) => ({ pk: `${prefix}#${i}`, sk: 'HISTORY' }));
    const raw = await batchGetRaw(ddb, config.tableName, keys, ['sk', 'entries', 'depth', 'version'], { consistentRead: true });
    const sdk = await batchGet(ddb, config.tableName, keys, ['entries', 'depth', 'version'], { consistentRead: true });
    const byKey = <T extends Record<string, unknown>>(items: T[]) => new Map(items.map((item) => [String(item.pk), item]));
    expect(raw).toHaveLength(200);
    expect(sdk).toHaveLength(200);
    const fromSdk = byKey(sdk);
    for (const [pk, item] of byKey(raw)) {
      const expected = fromSdk.get(pk)!;
      expect(Buffer.isBuffer(item.entries)).toBe(true);
      expect(Buffer.compare(item.entries as Buffer, Buffer.from(expected.entries as Uint8Array))).toBe(0);
      expect({ pk: item.pk, sk: item.sk, depth: item.depth, version: item.version }).toEqual({
        pk: expected.pk,
        sk: expected.sk,
        depth: expected.depth,
        version: expected.version,
      });
      expect(item.type).toBeUndefined();
    }
    await batchDelete(
      ddb,
      config.tableName,
      stored.map(({ pk, sk }) => ({ pk, sk })),
    );
  });

  it('skips the SDK logger middleware (its sensitive-data filter walks every key), while other middlewares see the keys', async () => {
    const prefix = `RAWREAD#${randomUUID()}`;
    const stored = Array.from({ length: 150 }, (_, i) => ({
      pk: `${prefix}#${i}`,
      sk: 'HISTORY',
      entries: randomBytes(8),
      depth: 1,
      version: 1,
    }));
    await batchPut(ddb, config.tableName, stored);
    const { client, logged } = loggingClient();
    const seen: number[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { RequestItems?: Record<string, { Keys?: unknown[] }> };
        if (context.commandName === 'BatchGetItemCommand') seen.push(input.RequestItems?.[config.tableName]?.Keys?.length ?? -1);
        return next(args);
      },
      { step: 'initialize', priority: 'low', name: 'countKeys' },
    );
    const keys = stored.map(({ pk, sk }) => ({ pk, sk }));
    const items = await batchGetRaw(client, config.tableName, keys, ['entries'], { consistentRead: true });
    expect(items).toHaveLength(150);
    // Only `pk` and the projection come back (the history's reads tell items apart by `pk`).
    expect(items.map((item) => Object.keys(item).sort().join())).toEqual(Array.from({ length: 150 }, () => 'entries,pk'));
    expect(seen).toEqual([100, 50]);
    expect(logged).toEqual([]);
    // The same client logs the SDK's own BatchGetItem: the logger is live, only the history's read skips it.
    await client.send(new BatchGetCommand({ RequestItems: { [config.tableName]: { Keys: keys.slice(0, 10) } } }));
    expect(logged).toEqual(['BatchGetItemCommand']);
    client.destroy();
    await batchDelete(ddb, config.tableName, keys);
  });

  it('throws the SDK’s own error for an error answer', async () => {
    await expect(
      batchGetRaw(ddb, `missing-${randomUUID()}`, [{ pk: 'a', sk: 'b' }], ['entries'], { consistentRead: true }),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
