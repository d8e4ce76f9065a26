/**
 * The results' sequence (docs/results.md): each eligible account
 * of an attempt, once its workflow batch has written its result part, gets a
 * `seq` in that attempt, 1, 2, 3, … in the order the batches become
 * readable. Within an attempt seqs are gap-free and never reused.
 *
 * Two kinds of items (docs/data-model.md):
 * - the head of an attempt (`keys.resultsHead`): `lastSeq`, the seqs given so
 *   far, and per batch index the last seq it got (`batches`); a batch made
 *   readable in parts (a paced batch, docs/test-mode.md "Slow accounts") has
 *   an entry per part (`<batch>.<part>`), and the head then also holds
 *   `pacedNext`, the earliest time of the attempt's next paced step;
 * - one range per readable batch or part of a batch (`keys.resultsRange`,
 *   sorted by its last seq): `fromSeq`, `toSeq`, the batch's index and part
 *   (its result part) and counts.
 *
 * A batch takes the seqs after the head's `lastSeq` in one transaction that
 * moves the head only if it still reads that `lastSeq` and has not seen the
 * batch, writes the range, and carries the caller's guards (the attempt is
 * still running) and items (the event): so the head moves only with its
 * range, a retried batch never takes seqs twice, and a range exists only when
 * every lower seq is readable. A reader reads the head (one small item), then
 * the ranges after its `afterSeq` (one Query), then the parts.
 */
import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoreMethod, TableAccess } from '../db/methods';
import * as keys from '../db/keys';
import { transactWrite, updateIf } from '../db/conditional';
import type { TransactItem } from '../credits/ledger';
import type { Clause } from '../db/expression';

/** A condition another item of the table must meet for a batch to take its seqs (a ConditionCheck). */
export interface SequenceGuard {
  key: Record<string, string>;
  condition: Clause;
}

/** Seqs one readable batch got: `fromSeq`..`toSeq` (inclusive), its part, and what it found. */
export interface SeqRange {
  attemptId: string;
  fromSeq: number;
  toSeq: number;
  /** Index of the workflow batch, and of its result part (lib/results/parts.ts resultPartKey). */
  batchIndex: number;
  /** The part of the batch these seqs belong to, for a batch made readable in parts (a paced batch); absent: the whole batch. */
  chunk?: number;
  /** Accounts with at least one contact / with none. */
  found: number;
  notFound: number;
}

/** One batch to sequence. */
export interface SequenceRequest {
  organizationId: string;
  campaignId: string;
  attemptId: string;
  batchIndex: number;
  /**
   * The part of the batch to sequence, for a batch made readable in parts
   * (0, 1, …, each its own result part): each part takes its seqs on its
   * own. Absent: the whole batch at once.
   */
  chunk?: number;
  /** Accounts of the batch (or of its part), in part order (≥ 1). */
  accounts: number;
  found: number;
  /** When the items may be removed (epoch seconds, the table's TTL): after the attempt's results can no longer be read. */
  expiresAt: number;
}

/** Outcome of {@link SequenceStore.assign}. */
export type SequenceOutcome =
  /** The batch's range: given now (`fresh`) or by an earlier try of the same batch. */
  | { ok: true; range: SeqRange; fresh: boolean }
  /** A guard failed (the attempt is no longer running): nothing was written. */
  | { ok: false };

/** Storage of the results' sequence. */
export interface SequenceStore {
  /**
   * Gives a batch its seqs (idempotent per attempt and batch index), with
   * `guards` (condition checks; any failing one refuses everything) and the
   * `items` built from the range (the event) in the same transaction.
   */
  assign(
    request: SequenceRequest,
    guards: readonly SequenceGuard[],
    items: (range: SeqRange, tableName: string) => TransactItem[],
  ): Promise<SequenceOutcome>;
  /** Seqs given so far in an attempt (strongly consistent; 0 before the first batch). One small read. */
  lastSeq(campaignId: string, attemptId: string): Promise<number>;
  /**
   * The ranges holding seqs after `afterSeq`, in seq order, until they hold
   * at least `accounts` such seqs (strongly consistent).
   */
  rangesAfter(campaignId: string, attemptId: string, afterSeq: number, accounts: number): Promise<SeqRange[]>;
  /**
   * Reserves the attempt's next paced slot: the time (epoch ms) from which
   * the caller may do one paced step, at least `intervalMs` after the slot
   * reserved before it (the first: now). Slots are held on the head, so
   * every batch of the attempt, in any process, shares one pace. One
   * conditional write (a retry when another batch reserved first).
   */
  reserveSlot(
    request: Pick<SequenceRequest, 'organizationId' | 'campaignId' | 'attemptId' | 'expiresAt'>,
    intervalMs: number,
    now?: number,
  ): Promise<number>;
}

/** The head's key of a batch, or of one part of a batch (`<batch>.<chunk>`), in its `batches` map. */
const headKeyOf = (batchIndex: number, chunk: number | undefined) => (chunk === undefined ? String(batchIndex) : `${batchIndex}.${chunk}`);

/** Transaction retries when another batch moved the head first. */
const MAX_RACES = 50;

const toRange = (item: Record<string, unknown>): SeqRange => ({
  attemptId: String(item.attemptId),
  fromSeq: Number(item.fromSeq),
  toSeq: Number(item.toSeq),
  batchIndex: Number(item.batchIndex),
  ...(item.chunk === undefined ? {} : { chunk: Number(item.chunk) }),
  found: Number(item.found),
  notFound: Number(item.notFound),
});

type Method<K extends keyof SequenceStore> = StoreMethod<SequenceStore, K>;

/** The head of an attempt (strongly consistent), or undefined before its first batch. */
const headOf = async ({ client, tableName }: TableAccess, campaignId: string, attemptId: string) =>
  (await client.send(new GetCommand({ TableName: tableName, Key: keys.resultsHead(campaignId, attemptId), ConsistentRead: true }))).Item;

/**
 * {@link SequenceStore.lastSeq} on its own (the store's own method is this one), with {@link rangesAfter}: what a
 * reader of the results reads, so the functions that answer pages and streams carry no code that assigns seqs or
 * paces slots (docs/deploy.md, bench `bundles`).
 */
export const lastSeq: Method<'lastSeq'> = (table) => async (campaignId, attemptId) =>
  Number((await headOf(table, campaignId, attemptId))?.lastSeq ?? 0);

/** {@link SequenceStore.rangesAfter} on its own (see {@link lastSeq}). */
export const rangesAfter: Method<'rangesAfter'> =
  ({ client, tableName }) =>
  async (campaignId, attemptId, afterSeq, accounts) => {
    const ranges: SeqRange[] = [];
    let held = 0;
    let startKey: Record<string, unknown> | undefined;
    const first = keys.resultsRange(campaignId, attemptId, afterSeq + 1);
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND sk >= :from',
          ExpressionAttributeValues: { ':pk': first.pk, ':from': first.sk },
          ConsistentRead: true,
          // A range holds a batch (1,000 accounts at most): a few ranges cover any page.
          Limit: Math.max(2, Math.ceil(accounts / 100) + 1),
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const range = toRange(item);
        ranges.push(range);
        held += range.toSeq - Math.max(range.fromSeq - 1, afterSeq);
        if (held >= accounts) return ranges;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return ranges;
  };

/** Builds the DynamoDB implementation of {@link SequenceStore}. */
export function createSequenceStore(table: { client: DynamoDBDocumentClient; tableName: string }): SequenceStore {
  const { client, tableName } = table;
  const head = (campaignId: string, attemptId: string) => headOf(table, campaignId, attemptId);

  const rangeOf = async (campaignId: string, attemptId: string, toSeq: number) => {
    const { Item } = await client.send(
      new GetCommand({ TableName: tableName, Key: keys.resultsRange(campaignId, attemptId, toSeq), ConsistentRead: true }),
    );
    if (!Item) throw new Error(`Results range ending at ${toSeq} of attempt ${attemptId} is missing`);
    return toRange(Item);
  };

  return {
    async assign(request, guards, items) {
      const { campaignId, attemptId, batchIndex, chunk } = request;
      const headKey = headKeyOf(batchIndex, chunk);
      for (let race = 0; race < MAX_RACES; race++) {
        const current = await head(campaignId, attemptId);
        const done = (current?.batches as Record<string, number> | undefined)?.[headKey];
        if (done !== undefined) return { ok: true, range: await rangeOf(campaignId, attemptId, done), fresh: false };
        const lastSeq = Number(current?.lastSeq ?? 0);
        const range: SeqRange = {
          attemptId,
          fromSeq: lastSeq + 1,
          toSeq: lastSeq + request.accounts,
          batchIndex,
          ...(chunk === undefined ? {} : { chunk }),
          found: request.found,
          notFound: request.accounts - request.found,
        };
        const headWrite: TransactItem = current
          ? {
              Update: {
                TableName: tableName,
                Key: keys.resultsHead(campaignId, attemptId),
                UpdateExpression: 'SET lastSeq = :to, batches.#batch = :to',
                ConditionExpression: 'lastSeq = :last AND attribute_not_exists(batches.#batch)',
                ExpressionAttributeNames: { '#batch': headKey },
                ExpressionAttributeValues: { ':to': range.toSeq, ':last': lastSeq },
              },
            }
          : {
              Put: {
                TableName: tableName,
                Item: {
                  ...keys.resultsHead(campaignId, attemptId),
                  type: 'resultsHead',
                  organizationId: request.organizationId,
                  campaignId,
                  attemptId,
                  lastSeq: range.toSeq,
                  batches: { [headKey]: range.toSeq },
                  ttl: request.expiresAt,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            };
        const rangePut: TransactItem = {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.resultsRange(campaignId, attemptId, range.toSeq),
              type: 'resultsRange',
              organizationId: request.organizationId,
              campaignId,
              ...range,
              ttl: request.expiresAt,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        };
        const checks: TransactItem[] = guards.map(({ key, condition }) => ({
          ConditionCheck: {
            TableName: tableName,
            Key: key,
            ConditionExpression: condition.expression,
            ...(condition.names && Object.keys(condition.names).length > 0 ? { ExpressionAttributeNames: condition.names } : {}),
            ...(condition.values && Object.keys(condition.values).length > 0 ? { ExpressionAttributeValues: condition.values } : {}),
          },
        }));
        const outcome = await transactWrite(client, { TransactItems: [...checks, headWrite, rangePut, ...items(range, tableName)] });
        if (outcome.ok) return { ok: true, range, fresh: true };
        if (outcome.failed.some((index) => index < guards.length)) return { ok: false };
        // Another batch (or a try of this one) moved the head first: read it again.
      }
      throw new Error(`Sequencing batch ${batchIndex} of attempt ${attemptId} lost ${MAX_RACES} races`);
    },

    async reserveSlot(request, intervalMs, now = Date.now()) {
      const { campaignId, attemptId } = request;
      let current = await head(campaignId, attemptId);
      for (let race = 0; race < MAX_RACES; race++) {
        const previous = current?.pacedNext === undefined ? undefined : Number(current.pacedNext);
        const slot = Math.max(now, previous ?? now);
        const outcome = await updateIf(client, {
          TableName: tableName,
          Key: keys.resultsHead(campaignId, attemptId),
          // A head made here is the head assign() expects: no seq given yet, no batch seen.
          UpdateExpression:
            'SET pacedNext = :next, lastSeq = if_not_exists(lastSeq, :zero), batches = if_not_exists(batches, :none), #type = :type, organizationId = :org, campaignId = :campaign, attemptId = :attempt, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: previous === undefined ? 'attribute_not_exists(pacedNext)' : 'pacedNext = :previous',
          ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':next': slot + intervalMs,
            ':zero': 0,
            ':none': {},
            ':type': 'resultsHead',
            ':org': request.organizationId,
            ':campaign': campaignId,
            ':attempt': attemptId,
            ':ttl': request.expiresAt,
            ...(previous === undefined ? {} : { ':previous': previous }),
          },
          ReturnValues: 'NONE',
        });
        if (outcome.ok) return slot;
        // Another batch reserved a slot first: try after it (the head as the refusal returned it).
        current = outcome.old;
      }
      throw new Error(`Pacing attempt ${attemptId} lost ${MAX_RACES} races`);
    },

    lastSeq: lastSeq(table),

    rangesAfter: rangesAfter(table),
  };
}
