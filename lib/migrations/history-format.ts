/**
 * One-off migration of the account history's buckets written in an older
 * encoding (format 1, before issue #43's compaction, or format 2, whose value
 * groups were not sorted) into format 3, whose groups a read searches by
 * binary search (lib/history/store.ts `encodeBucket`; docs/data-model.md
 * "Recency and CRM targets"). Keys, depth and entries are unchanged; each
 * bucket is rewritten on its version (`AccountHistoryStore.reencode`).
 *
 * Idempotent and resumable: a bucket already in format 3 is left alone, so
 * a run stopped at any point and started again rewrites only what is left,
 * and a second run changes nothing. Once it has run everywhere, the linear
 * read of formats 1 and 2 (`lookupBucket`, `walkBucket`) can go.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { scanItems } from '../db/query';
import type { AccountHistoryStore } from '../history/store';

/** What {@link migrateHistoryFormat} changed. */
export interface HistoryFormatMigration {
  /** Buckets rewritten in format 3. */
  buckets: number;
}

/** The item type of a history bucket (lib/history/store.ts). */
const BUCKET_TYPE = 'accountHistoryBucket';
/** Buckets re-encoded at once. */
const CONCURRENCY = 16;
/** The format byte (first byte of `entries`) of the current encoding. */
const CURRENT_FORMAT = 3;

/** Organization and bucket of a bucket key `ORG#<org>#HBUCKET#<bucket>`. */
function bucketOfKey(pk: unknown): { organizationId: string; bucket: number } {
  const key = String(pk);
  const at = key.lastIndexOf('#HBUCKET#');
  return { organizationId: key.slice('ORG#'.length, at), bucket: Number(key.slice(at + '#HBUCKET#'.length)) };
}

/**
 * Runs the migration; a second run changes nothing.
 * @param options.afterBucket - called after each bucket rewritten (tests stop a run there by throwing).
 * @param options.concurrency - buckets re-encoded at once (default 16; a test that stops a run uses 1).
 */
export async function migrateHistoryFormat(
  deps: { client: DynamoDBDocumentClient; tableName: string; history: AccountHistoryStore },
  options: { afterBucket?: () => Promise<void> | void; concurrency?: number } = {},
): Promise<HistoryFormatMigration> {
  const result: HistoryFormatMigration = { buckets: 0 };
  const old: { organizationId: string; bucket: number }[] = [];
  const flush = async () => {
    const batch = old.splice(0);
    await pMap(
      batch,
      async ({ organizationId, bucket }) => {
        if (!(await deps.history.reencode(organizationId, bucket))) return;
        result.buckets++;
        await options.afterBucket?.();
      },
      { concurrency: options.concurrency ?? CONCURRENCY },
    );
  };
  for await (const item of scanItems(deps.client, deps.tableName, '#type = :bucket', { ':bucket': BUCKET_TYPE })) {
    if (!(item.entries instanceof Uint8Array) || item.entries[0] === CURRENT_FORMAT) continue;
    old.push(bucketOfKey(item.pk));
    if (old.length >= 1_000) await flush();
  }
  await flush();
  return result;
}
