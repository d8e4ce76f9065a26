/**
 * An organization's requests in the table (docs/data-model.md "Entities" (request day), docs/limits.md "How the rate is counted"): one item per
 * organization and UTC day (`keys.requestDay`) holding
 *
 * - the request-rate window's counter, `w:<windowSeconds>:<windowStart>`: requests of the window granted to the
 *   processes' leases (lib/http/rate-limit.ts {@link RequestLimiter}); a past window's counter is removed by a later
 *   write (the item keeps the current window and the one before);
 * - the day's requests per API key, `k:<keyId>` (refusals included; `k:-` for keys from before key IDs), added by the
 *   same writes: the lease writes flush what a process counted since its last one.
 *
 * One UpdateItem per write, far below 1 KB for an organization's few keys: 1 WCU. The item is the one owner of these
 * attribute names: the limiter writes them, `org/usage` reads them ({@link requestsPerKey}).
 *
 * Beside it, the usage months (`keys.usageMonth`, {@link UsageMonths}): one item per organization, API key or
 * campaign and UTC month, holding that key's or campaign's requests per day (`d:<DD>`): `org/usage` by key or by
 * campaign reads at most 4 months of them per row (reads in proportion to the rows, not to days × keys). A campaign's
 * requests are those whose body names its `campaignId`. The limiter writes them in the wave of a lease write, once
 * it has counted a lease's worth of requests or a minute has passed (docs/data-model.md "Entities" (usage month)).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { updateIf } from '../db/conditional';
import * as keys from '../db/keys';

/** Prefix of a window counter's attribute. */
const WINDOW_PREFIX = 'w:';
/** Prefix of a key's request count attribute. */
const KEY_PREFIX = 'k:';
/** The key name requests of keys without an ID (keys from before key IDs) are counted under. */
export const UNNAMED_KEY = '-';
/** Days a request day item is kept (TTL): `org/usage` reads up to 92 days back; kept 400 for a year's comparisons. */
export const REQUEST_DAY_TTL_DAYS = 400;

/** The attribute of the window of `windowSeconds` starting at `windowStart` (epoch seconds). */
export const windowAttribute = (windowSeconds: number, windowStart: number) => `${WINDOW_PREFIX}${windowSeconds}:${windowStart}`;

/** The UTC day (`YYYY-MM-DD`) of a time in epoch milliseconds. */
export const utcDay = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

/** A fixed window of the request rate. */
export interface RateWindow {
  /** Length (seconds). */
  windowSeconds: number;
  /** Start (epoch seconds). */
  windowStart: number;
}

/** One write of the request day item. */
export interface RequestDayWrite {
  /** The UTC day of the item (`YYYY-MM-DD`). */
  day: string;
  /** A lease: `ask` requests of `window`, taken only while the window's count stays ≤ `atMost` (the limit). */
  lease?: { window: RateWindow; ask: number; atMost: number };
  /** Requests per key ID to add to the day (may be negative: a request given back; {@link UNNAMED_KEY} for keys without an ID). */
  counts: ReadonlyMap<string, number>;
  /** Window counters seen ended on an earlier write, removed by this one (attribute names as returned in `ended`). */
  remove: readonly string[];
}

/** What a write found. */
export interface RequestDayOutcome {
  /** Whether the lease was taken (true when the write asked none). */
  taken: boolean;
  /** The lease window's count after the write (granted to every process), or as found when the lease was refused. */
  count: number;
  /** Window counters of the item that ended more than a window before the lease's (to remove on the next write). */
  ended: string[];
}

/** The table side of the request-rate limiter and of usage counting. */
export interface RequestDays {
  /**
   * One UpdateItem of the organization's day item: the lease (conditional: the window's count + `ask` ≤ `atMost`),
   * the counts, the removals. A refused lease writes nothing (its counts stay with the caller).
   * @throws the table's errors.
   */
  write(organizationId: string, write: RequestDayWrite): Promise<RequestDayOutcome>;
  /**
   * Gives one granted request back to its window (a request whose key was refused, docs/limits.md): one UpdateItem
   * `ADD -1`, only while the count is above 0.
   */
  giveBack(organizationId: string, day: string, window: RateWindow): Promise<void>;
}

/** Window counters of an item that ended before `before` (epoch seconds). */
function endedWindows(item: Record<string, unknown> | undefined, before: number): string[] {
  return Object.keys(item ?? {}).filter((name) => {
    if (!name.startsWith(WINDOW_PREFIX)) return false;
    const [seconds, start] = name.slice(WINDOW_PREFIX.length).split(':').map(Number);
    return start! + seconds! < before;
  });
}

/** Builds the DynamoDB implementation of {@link RequestDays}. */
export function createRequestDays({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): RequestDays {
  return {
    async write(organizationId, { day, lease, counts, remove }) {
      const names: Record<string, string> = { '#ttl': 'ttl', '#day': 'day' };
      const values: Record<string, unknown> = {
        ':ttl': Date.parse(`${day}T00:00:00Z`) / 1000 + REQUEST_DAY_TTL_DAYS * 86_400,
        ':day': day,
      };
      const adds: string[] = [];
      if (lease) {
        names['#w'] = windowAttribute(lease.window.windowSeconds, lease.window.windowStart);
        values[':ask'] = lease.ask;
        adds.push('#w :ask');
      }
      let i = 0;
      for (const [keyId, n] of counts) {
        if (n === 0) continue;
        names[`#k${i}`] = `${KEY_PREFIX}${keyId}`;
        values[`:k${i}`] = n;
        adds.push(`#k${i} :k${i}`);
        i++;
      }
      const removals = remove.filter((name) => name !== names['#w']);
      removals.forEach((name, j) => (names[`#r${j}`] = name));
      const expression = [
        'SET #ttl = :ttl, #day = :day',
        ...(adds.length > 0 ? [`ADD ${adds.join(', ')}`] : []),
        ...(removals.length > 0 ? [`REMOVE ${removals.map((_, j) => `#r${j}`).join(', ')}`] : []),
      ].join(' ');
      const input = { TableName: tableName, Key: keys.requestDay(organizationId, day), UpdateExpression: expression };
      if (!lease) {
        await client.send(new UpdateCommand({ ...input, ExpressionAttributeNames: names, ExpressionAttributeValues: values }));
        return { taken: true, count: 0, ended: [] };
      }
      values[':most'] = lease.atMost - lease.ask;
      const outcome = await updateIf(client, {
        ...input,
        ConditionExpression: 'attribute_not_exists(#w) OR #w <= :most',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      });
      const item = outcome.ok ? outcome.item : outcome.old;
      return {
        taken: outcome.ok,
        count: Number(item?.[names['#w']!] ?? 0),
        ended: endedWindows(item, lease.window.windowStart - lease.window.windowSeconds),
      };
    },

    async giveBack(organizationId, day, { windowSeconds, windowStart }) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.requestDay(organizationId, day),
            UpdateExpression: 'ADD #w :minusOne',
            ConditionExpression: '#w > :zero',
            ExpressionAttributeNames: { '#w': windowAttribute(windowSeconds, windowStart) },
            ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}

/** The requests per key ID of a stored request day item ({@link UNNAMED_KEY} for keys without an ID). */
export function requestsPerKey(item: Record<string, unknown>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [name, value] of Object.entries(item))
    if (name.startsWith(KEY_PREFIX)) counts.set(name.slice(KEY_PREFIX.length), Number(value));
  return counts;
}

/** The day (`YYYY-MM-DD`) of a stored request day item. */
export const dayOf = (item: Record<string, unknown>): string => String(item.day);

/** The table side of `lastUsedAt` (docs/authentication.md): each key's last minute of use, monotone. */
export interface KeyUses {
  /**
   * Records that the key was used in the minute `minute` (ISO 8601, seconds zero): one UpdateItem, kept only when
   * later than the one stored (two processes never move it back).
   */
  record(organizationId: string, keyId: string, minute: string): Promise<void>;
}

/** Builds the DynamoDB implementation of {@link KeyUses}. */
export function createKeyUses({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): KeyUses {
  return {
    async record(organizationId, keyId, minute) {
      await updateIf(client, {
        TableName: tableName,
        Key: keys.keyLastUse(organizationId, keyId),
        UpdateExpression: 'SET lastUsedAt = :at',
        ConditionExpression: 'attribute_not_exists(lastUsedAt) OR lastUsedAt < :at',
        ExpressionAttributeValues: { ':at': minute },
        ReturnValues: 'NONE',
      });
    },
  };
}

/** Prefix of a day's requests in a usage month item. */
const DAY_PREFIX = 'd:';

/** What a usage month counts: an API key's requests (`K`) or a campaign's (`C`). */
export type UsageKind = 'K' | 'C';

/** Requests to add to one key's or campaign's day. */
export interface UsageCount {
  kind: UsageKind;
  /** The key ID or campaign ID. */
  id: string;
  /** UTC day (`YYYY-MM-DD`). */
  day: string;
  /** Requests (may be negative: a request given back). */
  n: number;
}

/** The table side of the usage months (`org/usage` by key and by campaign). */
export interface UsageMonths {
  /**
   * Adds the counts: one UpdateItem `ADD d:<DD> n` per key or campaign and month (its days together), in parallel.
   * Never throws: the counts of the items whose write failed come back, with the first error, for the caller to keep.
   */
  add(organizationId: string, counts: readonly UsageCount[]): Promise<{ failed: UsageCount[]; error?: unknown }>;
}

/** Builds the DynamoDB implementation of {@link UsageMonths}. */
export function createUsageMonths({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): UsageMonths {
  return {
    async add(organizationId, counts) {
      const items = new Map<string, { kind: UsageKind; id: string; month: string; days: Map<string, number>; counts: UsageCount[] }>();
      for (const count of counts) {
        const { kind, id, day, n } = count;
        if (n === 0) continue;
        const month = day.slice(0, 7);
        const name = `${kind}#${month}#${id}`;
        let item = items.get(name);
        if (!item) items.set(name, (item = { kind, id, month, days: new Map(), counts: [] }));
        item.days.set(day, (item.days.get(day) ?? 0) + n);
        item.counts.push(count);
      }
      const written = await Promise.allSettled(
        [...items.values()].map(({ kind, id, month, days }) => {
          const names: Record<string, string> = { '#id': 'id', '#month': 'month', '#ttl': 'ttl' };
          const values: Record<string, unknown> = {
            ':id': id,
            ':month': month,
            ':ttl': Date.parse(`${month}-01T00:00:00Z`) / 1000 + (REQUEST_DAY_TTL_DAYS + 31) * 86_400,
          };
          const adds = [...days].map(([day, n], i) => {
            names[`#d${i}`] = `${DAY_PREFIX}${day.slice(8, 10)}`;
            values[`:d${i}`] = n;
            return `#d${i} :d${i}`;
          });
          return client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.usageMonth(organizationId, kind, month, id),
              UpdateExpression: `SET #id = :id, #month = :month, #ttl = :ttl ADD ${adds.join(', ')}`,
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
            }),
          );
        }),
      );
      const all = [...items.values()];
      const failed = written.flatMap((outcome, i) => (outcome.status === 'rejected' ? all[i]!.counts : []));
      const error = written.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')?.reason;
      return error === undefined ? { failed } : { failed, error };
    },
  };
}

/** The key ID or campaign ID of a stored usage month item. */
export const usageIdOf = (item: Record<string, unknown>): string => String(item.id);

/** The requests per UTC day (`YYYY-MM-DD`) of a stored usage month item. */
export function requestsPerDay(item: Record<string, unknown>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [name, value] of Object.entries(item))
    if (name.startsWith(DAY_PREFIX)) counts.set(`${String(item.month)}-${name.slice(DAY_PREFIX.length)}`, Number(value));
  return counts;
}
