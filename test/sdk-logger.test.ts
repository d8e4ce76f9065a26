/**
 * The hot reads without the SDK's logger middleware (lib/db/sdk-logger.ts; docs/architecture.md "Hot reads"):
 * a command wrapped by `withoutSdkLogger` answers what it answers without it and reaches no logger, while the
 * same client's other calls still do; the key read and `batchGet` go wrapped.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { batchDelete, batchGet, batchPut } from '../lib/db/batch';
import { withoutSdkLogger } from '../lib/db/sdk-logger';
import { createApiKeyReader } from '../lib/organizations/api-keys';
import { loggingClient } from './support/logging-client';

describe('withoutSdkLogger (lib/db/sdk-logger.ts)', () => {
  const prefix = `SDKLOGGER#${randomUUID()}`;
  const stored = [0, 1].map((i) => ({ pk: `${prefix}#${i}`, sk: 'ITEM', type: 'sdkLoggerTest', value: i, tags: new Set(['a', 'b']) }));
  const keys = stored.map(({ pk, sk }) => ({ pk, sk }));
  afterAll(() => batchDelete(ddb, config.tableName, keys));

  it('answers what the unwrapped command answers, and only the unwrapped one reaches the logger', async () => {
    await batchPut(ddb, config.tableName, stored);
    const { client, logged } = loggingClient();
    const read = () => new GetCommand({ TableName: config.tableName, Key: keys[0], ConsistentRead: true });
    const wrapped = await client.send(withoutSdkLogger(read()));
    expect(logged).toEqual([]);
    const plain = await client.send(read());
    expect(logged).toEqual(['GetItemCommand']);
    expect(wrapped.Item).toEqual(stored[0]);
    expect(plain.Item).toEqual(wrapped.Item);
    client.destroy();
  });

  it('is on every batchGet and on the API key read', async () => {
    await batchPut(ddb, config.tableName, stored);
    const { client, logged } = loggingClient();
    const found = await batchGet(client, config.tableName, [...keys, { pk: `${prefix}#absent`, sk: 'ITEM' }], undefined, {
      consistentRead: true,
    });
    expect(found.sort((a, b) => Number(a.value) - Number(b.value))).toEqual(stored);
    expect(await createApiKeyReader({ client, tableName: config.tableName }).findByHash('0'.repeat(64))).toBeUndefined();
    expect(logged).toEqual([]);
    client.destroy();
  });
});
