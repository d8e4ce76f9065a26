/**
 * One-off migration of the account history's buckets written in an older
 * encoding into the current one (`HISTORY_FORMAT`, lib/history/store.ts
 * `encodeBucket`; docs/data-model.md "Recency and CRM targets"): run as
 * `007-history-format-3` (formats 1 and 2 into 3, when 3 was current) and
 * again as `009-history-format-4` (formats 1–3 into 4, whose entries keep 52
 * hash bits less the bucket's address bits). Keys, depth and entries are
 * unchanged; each bucket is rewritten on its version
 * (`AccountHistoryStore.reencode`).
 *
 * Idempotent and resumable: a bucket already in the current format is left
 * alone, so a run stopped at any point and started again rewrites only what
 * is left, and a second run changes nothing. Once it has run everywhere, the
 * decode of formats 1–3 (`openBucket`'s, `walkBucket`) can go.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { scanItems } from '../db/query';
import { HISTORY_FORMAT, type AccountHistoryStore } from '../history/store';

/** What {@link migrateHistoryFormat} changed. */
export interface HistoryFormatMigration {
  /** Buckets rewritten in the current format. */
  buckets: number;
}

/** The item type of a history bucket (lib/history/store.ts). */
const BUCKET_TYPE = 'accountHistoryBucket';
/** Buckets re-encoded at once. */
const CONCURRENCY = 16;

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
    if (!(item.entries instanceof Uint8Array) || item.entries[0] === HISTORY_FORMAT) continue;
    old.push(bucketOfKey(item.pk));
    if (old.length >= 1_000) await flush();
  }
  await flush();
  return result;
}
