/**
 * Conditional writes (lib/db/conditional.ts) against DynamoDB Local: what `updateIf` answers, on its own and run in a
 * transaction with `alsoPut`, including when a delete lands between the transaction and its read-back (the item is
 * then reported gone, never as an empty item a caller would turn into an answer of "undefined" fields).
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { updateIf } from '../lib/db/conditional';

const TableName = config.tableName;

/** A new item `{ pk, sk: 'ITEM', n: 1 }` and the key of a new item to write beside an update (the `alsoPut`). */
async function fixture() {
  const pk = `CONDITIONAL#${randomUUID()}`;
  await ddb.send(new PutCommand({ TableName, Item: { pk, sk: 'ITEM', n: 1 } }));
  return { key: { pk, sk: 'ITEM' }, also: { pk, sk: 'ALSO' } };
}

const increment = (key: Record<string, string>) => ({
  TableName,
  Key: key,
  UpdateExpression: 'SET n = n + :one',
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':one': 1 },
});

describe('updateIf (lib/db/conditional.ts)', () => {
  it('answers the item after the update, alone and in a transaction with alsoPut (then read back); the old item when refused', async () => {
    const { key, also } = await fixture();
    expect(await updateIf(ddb, increment(key))).toEqual({ ok: true, item: { ...key, n: 2 } });
    expect(await updateIf(ddb, increment(key), [{ Put: { TableName, Item: { ...also, made: true } } }])).toEqual({
      ok: true,
      item: { ...key, n: 3 },
    });
    expect((await ddb.send(new GetCommand({ TableName, Key: also, ConsistentRead: true }))).Item).toEqual({ ...also, made: true });
    const refused = await updateIf(ddb, { ...increment(key), ConditionExpression: 'n = :one' });
    expect(refused).toEqual({ ok: false, old: { ...key, n: 3 } });
  });

  it('in a transaction, reports the item gone (undefined) when a delete lands before the read-back; the write and alsoPut happened', async () => {
    const { key, also } = await fixture();
    const name = 'deleteAfterTransaction';
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(args.input).includes(key.pk))
          await ddb.send(new DeleteCommand({ TableName, Key: key }));
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      const outcome = await updateIf(ddb, increment(key), [{ Put: { TableName, Item: also } }]);
      expect(outcome).toEqual({ ok: true, item: undefined });
    } finally {
      ddb.middlewareStack.remove(name);
    }
    expect((await ddb.send(new GetCommand({ TableName, Key: also, ConsistentRead: true }))).Item).toEqual(also);
  });
});
