/**
 * Conditional writes, written once: "update (put, delete) if, else tell me
 * the old item", and transactions that retry DynamoDB's transaction conflicts and report
 * which item's condition failed (Powertools' `_putRecord` pattern: the
 * failure becomes a value, everything else is rethrown).
 */
import { ConditionalCheckFailedException, TransactionCanceledException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  type PutCommandInput,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** One item of a TransactWriteItems (DocumentClient form). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * A single conditional write run as a transaction with `alsoPut` (e.g. the audit entry of the
 * change: docs/audit.md), mapped back to the single write's outcome: a failed condition of the
 * write itself is `{ ok: false, old }`; a failed condition of an `alsoPut` item throws (the
 * caller's items must be new).
 */
async function writeWith(
  client: DynamoDBDocumentClient,
  write: TransactItem,
  alsoPut: readonly TransactItem[],
): Promise<{ ok: true } | { ok: false; old: Record<string, unknown> | undefined }> {
  const outcome = await transactWrite(client, { TransactItems: [write, ...alsoPut] });
  if (outcome.ok) return { ok: true };
  if (!outcome.failed.includes(0)) throw new Error('An item written with a change already existed; nothing was written');
  return { ok: false, old: outcome.old[0] };
}

/**
 * Outcome of {@link updateIf}: the item after the update, or the item as it was when the condition failed (absent
 * when there was none). `After` is what `item` can be: always an item for a single UpdateItem (DynamoDB returns it
 * atomically with the write); for an update run in a transaction ({@link updateIf}'s `alsoPut`), the item read back
 * afterwards, `undefined` when a delete landed between the write and the read (the write happened).
 */
export type UpdateIfOutcome<After = Record<string, unknown>> =
  { ok: true; item: After } | { ok: false; old: Record<string, unknown> | undefined };

/**
 * Runs one conditional UpdateItem.
 *
 * @param input - the update; `ConditionExpression` is required. `ReturnValues`
 *   defaults to `ALL_NEW`; the old item is always requested on failure.
 * @param alsoPut - items written in the same transaction (new items, e.g. the change's audit entry);
 *   then the update runs as a TransactWriteItems and `item` is read back (strongly consistent) unless
 *   `ReturnValues` is `NONE`: the item as it is after the write (later writes included), or `undefined`
 *   when it was deleted since, so a caller given `alsoPut` must say what a gone item answers.
 * @returns `{ ok: true, item }` (the attributes `ReturnValues` asked for; `{}` for `NONE`), or
 *   `{ ok: false, old }` when the condition failed.
 * @throws every error other than ConditionalCheckFailedException.
 */
export async function updateIf(
  client: DynamoDBDocumentClient,
  input: UpdateCommandInput & { ConditionExpression: string },
): Promise<UpdateIfOutcome>;
export async function updateIf(
  client: DynamoDBDocumentClient,
  input: UpdateCommandInput & { ConditionExpression: string },
  alsoPut: readonly TransactItem[],
): Promise<UpdateIfOutcome<Record<string, unknown> | undefined>>;
export async function updateIf(
  client: DynamoDBDocumentClient,
  input: UpdateCommandInput & { ConditionExpression: string },
  alsoPut: readonly TransactItem[] = [],
): Promise<UpdateIfOutcome<Record<string, unknown> | undefined>> {
  if (alsoPut.length > 0) {
    const { ReturnValues, TableName, Key, ...update } = input;
    const outcome = await writeWith(
      client,
      { Update: { TableName, Key, ...update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as TransactItem,
      alsoPut,
    );
    if (!outcome.ok) return outcome;
    if (ReturnValues === 'NONE') return { ok: true, item: {} };
    // A transaction returns no values: the item as written is read back (one more round trip).
    const { Item } = await client.send(new GetCommand({ TableName, Key, ConsistentRead: true }));
    return { ok: true, item: Item };
  }
  try {
    const { Attributes } = await client.send(
      new UpdateCommand({ ReturnValues: 'ALL_NEW', ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
    );
    return { ok: true, item: Attributes ?? {} };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { ok: false, old: oldItemOf(error) };
  }
}

/** Outcome of {@link putIf} and {@link deleteIf}: written, or the item as it was when the condition failed (absent when there was none). */
export type WriteIfOutcome = { ok: true } | { ok: false; old: Record<string, unknown> | undefined };

const oldItemOf = (error: ConditionalCheckFailedException) =>
  error.Item ? unmarshall(error.Item as Record<string, AttributeValue>) : undefined;

/**
 * Runs one conditional PutItem; the old item is requested on failure. With `alsoPut`, in one
 * TransactWriteItems with those items ({@link updateIf}).
 * @throws every error other than ConditionalCheckFailedException.
 */
export async function putIf(
  client: DynamoDBDocumentClient,
  input: PutCommandInput & { ConditionExpression: string },
  alsoPut: readonly TransactItem[] = [],
): Promise<WriteIfOutcome> {
  if (alsoPut.length > 0)
    return writeWith(client, { Put: { ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as TransactItem, alsoPut);
  try {
    await client.send(new PutCommand({ ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return { ok: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { ok: false, old: oldItemOf(error) };
  }
}

/**
 * Runs one conditional DeleteItem; the old item is requested on failure. With `alsoPut`, in one
 * TransactWriteItems with those items ({@link updateIf}).
 * @throws every error other than ConditionalCheckFailedException.
 */
export async function deleteIf(
  client: DynamoDBDocumentClient,
  input: DeleteCommandInput & { ConditionExpression: string },
  alsoPut: readonly TransactItem[] = [],
): Promise<WriteIfOutcome> {
  if (alsoPut.length > 0)
    return writeWith(client, { Delete: { ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as TransactItem, alsoPut);
  try {
    await client.send(new DeleteCommand({ ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return { ok: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { ok: false, old: oldItemOf(error) };
  }
}

/**
 * Outcome of {@link transactWrite}: written, or refused with the positions of
 * the items whose condition failed and, for items that asked for it with
 * `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`, the item as it was.
 */
export type TransactOutcome = { ok: true } | { ok: false; failed: number[]; old: (Record<string, unknown> | undefined)[] };

/** Transaction conflicts retried at most (real DynamoDB raises them under contention; DynamoDB Local never does). */
const MAX_CONFLICT_RETRIES = 8;

/**
 * Runs a TransactWriteItems, retrying transaction conflicts with jittered
 * exponential backoff (20 ms doubling, at most 1 s a wait).
 *
 * @returns `{ ok: true }`, or `{ ok: false, failed }` listing the positions of
 *   the items whose condition failed (nothing was written then).
 * @throws every other error (including conflicts past the retries).
 */
export async function transactWrite(client: DynamoDBDocumentClient, input: TransactWriteCommandInput): Promise<TransactOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.send(new TransactWriteCommand(input));
      return { ok: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const failed = reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
      if (failed.length > 0) {
        const old = reasons.map((reason) => (reason.Item ? unmarshall(reason.Item as Record<string, AttributeValue>) : undefined));
        return { ok: false, failed, old };
      }
      const conflict = reasons.some((reason) => reason.Code === 'TransactionConflict');
      if (!conflict || attempt >= MAX_CONFLICT_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 20 * 2 ** attempt) * Math.random()));
    }
  }
}
