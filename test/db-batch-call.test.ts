/**
 * One batch call at a time (lib/db/batch-call.ts): what a path that never needs more than one call, or a bounded
 * page of them, runs instead of lib/db/batch.ts's pool. Against DynamoDB Local: what they read and write, unprocessed
 * keys aside, and the bounds they refuse past (a caller past them must use lib/db/batch.ts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { BATCH_CONCURRENCY, BATCH_GET_SIZE, BATCH_WRITE_SIZE, batchGetAtOnce, batchGetCall, batchWriteCall } from '../lib/db/batch-call';
import { batchDelete, batchPut } from '../lib/db/batch';

describe('lib/db/batch-call.ts', () => {
  it('writes 25 items in one call and reads them back, one call of 100 keys and a page of 250 keys over three calls at once', async () => {
    const prefix = `BATCHCALL#${randomUUID()}`;
    const items = Array.from({ length: 250 }, (_, i) => ({ pk: `${prefix}#${i}`, sk: 'ITEM', n: i }));
    await batchWriteCall(
      ddb,
      config.tableName,
      items.slice(0, BATCH_WRITE_SIZE).map((Item) => ({ PutRequest: { Item } })),
    );
    await batchPut(ddb, config.tableName, items.slice(BATCH_WRITE_SIZE));
    const keys = items.map(({ pk, sk }) => ({ pk, sk }));
    const one = await batchGetCall(ddb, config.tableName, [...keys.slice(0, 99), { pk: `${prefix}#absent`, sk: 'ITEM' }], ['n'], {
      consistentRead: true,
    });
    expect(one.map((item) => item.n).sort((a, b) => Number(a) - Number(b))).toEqual(items.slice(0, 99).map((item) => item.n));
    const page = await batchGetAtOnce(ddb, config.tableName, keys, undefined, { consistentRead: true });
    expect(page).toHaveLength(250);
    expect(new Set(page.map((item) => item.pk))).toEqual(new Set(items.map((item) => item.pk)));
    await batchDelete(ddb, config.tableName, keys);
    expect(await batchGetAtOnce(ddb, config.tableName, keys, undefined, { consistentRead: true })).toEqual([]);
  });

  it('refuses more than one call takes (100 keys, 25 writes) and a page past 100 × 16 keys, before any call', async () => {
    const keys = (count: number) => Array.from({ length: count }, (_, i) => ({ pk: `NEVER#${i}`, sk: 'ITEM' }));
    await expect(batchGetCall(ddb, config.tableName, keys(BATCH_GET_SIZE + 1))).rejects.toThrow(RangeError);
    await expect(
      batchWriteCall(
        ddb,
        config.tableName,
        keys(BATCH_WRITE_SIZE + 1).map((Key) => ({ DeleteRequest: { Key } })),
      ),
    ).rejects.toThrow(/at most 25 requests \(got 26\)/);
    await expect(batchGetAtOnce(ddb, config.tableName, keys(BATCH_GET_SIZE * BATCH_CONCURRENCY + 1))).rejects.toThrow(
      /at most 1600 keys \(got 1601\)/,
    );
  });
});
