/**
 * Every data migration, in the one order they run (docs/architecture.md), and the
 * runner that remembers which ran: `npm start` runs it on its data folder
 * before serving, operators run it with `npx ops migrate` against a deployed
 * table after a deploy.
 *
 * Each migration is idempotent on its own (running it twice changes nothing
 * the second time). The runner records each one that finished in an item
 * `MIGRATIONS` / `MIGRATION#<id>` (lib/db/table.ts `keys.migration`), so a
 * restart reads one partition (one Query) instead of scanning the table
 * again (README.md#set-up: ready within 15 s on 100,000 items). `force` runs
 * them all again (after a rollback wrote old shapes, say).
 *
 * Adding a migration: write it in this folder, idempotent, and append it to
 * {@link MIGRATIONS} under a new ID; never reorder or rename the ones here.
 */
import { PutCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import * as keys from '../db/keys';
import type { AccountHistoryStore } from '../history/store';
import { migrateLedger } from './ledger';
import { migrateAccountHistory } from './account-history';
import { migrateApiKeyLists } from './api-key-lists';
import { migrateHistoryShards } from './history-shards';
import { migrateHistoryBuckets } from './history-buckets';
import { migrateApiKeyDescriptions } from './api-key-descriptions';
import { migrateHistoryFormat } from './history-format';
import { migrateCopyIndex } from './copy-index';

/** What every migration receives: the table and the stores it rewrites into. */
export interface MigrationDependencies {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Account history (recency and CRM targets), written by the history migrations. */
  history: AccountHistoryStore;
  /** The data bucket (the former S3 history objects, read and deleted by 004-history-shards). */
  s3: S3Client;
  bucketName: string;
}

/** One data migration. */
export interface Migration {
  /** Stable ID, recorded once it ran: never renamed. */
  id: string;
  /** What it brings up to date, for the operator's output. */
  summary: string;
  /** Runs it; resolves with counts of what changed (all 0 when nothing was left to do). */
  run(deps: MigrationDependencies): Promise<Record<string, number>>;
}

/** Every migration, in the order they run. */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: '001-ledger',
    summary:
      'ledger entries of the first ledger rewritten; organizations registered, with an opening entry where the balance predates the ledger (docs/launch.md#the-credit-ledger)',
    run: async (deps) => ({ ...(await migrateLedger(deps)) }),
  },
  {
    id: '002-account-history',
    summary: 'per-account recency and CRM items moved into the account history (docs/launch.md)',
    run: async (deps) => ({ ...(await migrateAccountHistory(deps)) }),
  },
  {
    id: '003-api-key-lists',
    summary: "each organization's active API keys listed on its item, or the list repaired (docs/authentication.md)",
    run: async (deps) => ({ ...(await migrateApiKeyLists(deps)) }),
  },
  {
    id: '004-history-shards',
    summary: 'recency markers and CRM lists (S3) moved into the account history shards, one entry per account (docs/launch.md)',
    run: async (deps) => ({ ...(await migrateHistoryShards(deps)) }),
  },
  {
    id: '005-history-buckets',
    summary: 'account history moved from its 4,096 fixed shards into buckets that split as the organization grows (docs/data-model.md)',
    run: async (deps) => ({ ...(await migrateHistoryBuckets(deps)) }),
  },
  {
    id: '006-api-key-descriptions',
    summary:
      'API keys issued before key IDs given their ID and description, every scope kept, so keys/list shows them (docs/authentication.md)',
    run: async (deps) => ({ ...(await migrateApiKeyDescriptions(deps)) }),
  },
  {
    id: '007-history-format-3',
    summary:
      'account history buckets in an older encoding rewritten in format 3, whose reads search each value group by binary search (docs/data-model.md)',
    run: async (deps) => ({ ...(await migrateHistoryFormat(deps)) }),
  },
  {
    id: '008-copy-index',
    summary: "result parts stored before the copy index recorded in it, so the vendor's erasure finds every stored copy (docs/privacy.md)",
    run: async (deps) => ({ ...(await migrateCopyIndex(deps)) }),
  },
  {
    id: '009-history-format-4',
    summary:
      'account history buckets in an older encoding rewritten in format 4, whose entries keep the hash bits past the bucket address only (docs/data-model.md)',
    run: async (deps) => ({ ...(await migrateHistoryFormat(deps)) }),
  },
];

/** What {@link runMigrations} did. */
export interface MigrationReport {
  /** Migrations run now, in order, with what each changed. */
  ran: { id: string; changed: Record<string, number> }[];
  /** Migrations skipped because their record says they ran (IDs). */
  skipped: string[];
}

/**
 * Runs, in order, every migration of {@link MIGRATIONS} not recorded as run
 * on this table (all of them with `force`), recording each as it finishes.
 * A migration that throws stops the run; the ones before it stay recorded.
 * @param options.migrations - the list to run (tests); default {@link MIGRATIONS}.
 * @throws whatever a migration or the table throws.
 */
export async function runMigrations(
  deps: MigrationDependencies,
  options: { force?: boolean; migrations?: readonly Migration[]; now?: () => Date } = {},
): Promise<MigrationReport> {
  const { client, tableName } = deps;
  const now = options.now ?? (() => new Date());
  const done = new Set<string>();
  if (!options.force) {
    const pages = paginateQuery(
      { client },
      {
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.migrations },
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) done.add(String(item.id));
  }
  const report: MigrationReport = { ran: [], skipped: [] };
  for (const migration of options.migrations ?? MIGRATIONS) {
    if (done.has(migration.id)) {
      report.skipped.push(migration.id);
      continue;
    }
    const changed = await migration.run(deps);
    await client.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...keys.migration(migration.id), id: migration.id, ranAt: now().toISOString(), changed },
      }),
    );
    report.ran.push({ id: migration.id, changed });
  }
  return report;
}
