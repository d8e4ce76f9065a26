/**
 * One-off migration of the account history kept in S3 until issue #29
 * (docs/data-model.md "Recency and CRM targets"), idempotent:
 *
 * 1. Recency markers `recency/<org>/<completedAt>/<campaign>.txt` (a copy of
 *    each enriched campaign's eligible list): each account's latest
 *    `completedAt` becomes its entry's enrichment time.
 * 2. CRM target lists `crm/<org>/*.txt`: each ID becomes a CRM target.
 *
 * Per organization, both are written into the history shards
 * (lib/history/store.ts, each bucket rewritten once; times move forward only),
 * then the organization's objects are deleted. A run stopped in between
 * writes the same entries again and deletes what is left; a second run finds
 * nothing. Completions still pending on the organization item
 * (`recencyPending_<campaign>`) need nothing: FinishRecording writes them
 * into the shards.
 */
import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { createAccountListStore } from '../account-lists/account-list';
import type { AccountHistoryStore, HistoryChange } from '../history/store';
import { OBJECT_PREFIXES, objectKeys } from '../objects';
import { DELETE_PAGE_SIZE, listKeys } from '../storage/prefixes';

/** What {@link migrateHistoryShards} changed. */
export interface HistoryShardsMigration {
  /** Organizations whose objects were moved. */
  organizations: number;
  /** Recency markers read (then deleted). */
  markers: number;
  /** CRM lists read (then deleted). */
  crmLists: number;
  /** Distinct accounts written into the shards. */
  accounts: number;
}

/** An organization's former history, read from its S3 objects. */
export interface LegacyHistory {
  /** Account → latest completion time (ISO 8601) among the markers holding it. */
  enrichedAt: Map<string, string>;
  /** CRM targets. */
  crmTargets: Set<string>;
  markerKeys: string[];
  crmKeys: string[];
}

/** Organization ID of a key `<prefix><org>/…`. */
const organizationOf = (key: string): string => key.split('/')[1] ?? '';

/**
 * Reads one organization's markers and CRM lists (the layout before issue #29).
 * @param keys - its marker and CRM list keys (default: listed).
 */
export async function readLegacyHistory(
  deps: { s3: S3Client; bucketName: string },
  organizationId: string,
  keys?: { markerKeys: string[]; crmKeys: string[] },
): Promise<LegacyHistory> {
  const lists = createAccountListStore({ client: deps.s3, bucketName: deps.bucketName });
  const markerKeys = keys?.markerKeys ?? (await listKeys(deps.s3, deps.bucketName, objectKeys.recencyPrefix(organizationId)));
  const crmKeys = keys?.crmKeys ?? (await listKeys(deps.s3, deps.bucketName, objectKeys.crmPrefix(organizationId)));
  const enrichedAt = new Map<string, string>();
  const crmTargets = new Set<string>();
  for (const key of markerKeys) {
    // recency/<org>/<completedAt>/<campaign>.txt; completedAt is toISOString(), so strings compare as times.
    const completedAt = new Date(key.split('/')[2] ?? '').toISOString();
    await lists.forEachId(key, (id) => {
      const known = enrichedAt.get(id);
      if (!known || known < completedAt) enrichedAt.set(id, completedAt);
    });
  }
  for (const key of crmKeys) await lists.forEachId(key, (id) => crmTargets.add(id));
  return { enrichedAt, crmTargets, markerKeys, crmKeys };
}

/** Runs the migration; a second run changes nothing. */
export async function migrateHistoryShards(deps: {
  s3: S3Client;
  bucketName: string;
  history: AccountHistoryStore;
}): Promise<HistoryShardsMigration> {
  const result: HistoryShardsMigration = { organizations: 0, markers: 0, crmLists: 0, accounts: 0 };
  const byOrganization = new Map<string, { markerKeys: string[]; crmKeys: string[] }>();
  const of = (organizationId: string) => {
    let keys = byOrganization.get(organizationId);
    if (!keys) byOrganization.set(organizationId, (keys = { markerKeys: [], crmKeys: [] }));
    return keys;
  };
  for (const key of await listKeys(deps.s3, deps.bucketName, OBJECT_PREFIXES.recency))
    if (key.endsWith('.txt')) of(organizationOf(key)).markerKeys.push(key);
  for (const key of await listKeys(deps.s3, deps.bucketName, OBJECT_PREFIXES.crm))
    if (key.endsWith('.txt')) of(organizationOf(key)).crmKeys.push(key);

  /** Deletes exactly the objects read (an object written meanwhile is left for the next run). */
  const deleteKeys = async (keys: readonly string[]) => {
    for (let i = 0; i < keys.length; i += DELETE_PAGE_SIZE) {
      const Objects = keys.slice(i, i + DELETE_PAGE_SIZE).map((Key) => ({ Key }));
      await deps.s3.send(new DeleteObjectsCommand({ Bucket: deps.bucketName, Delete: { Objects, Quiet: true } }));
    }
  };
  for (const [organizationId, keys] of byOrganization) {
    const legacy = await readLegacyHistory(deps, organizationId, keys);
    const changes: HistoryChange[] = [];
    for (const accountId of new Set([...legacy.enrichedAt.keys(), ...legacy.crmTargets])) {
      const enrichedAt = legacy.enrichedAt.get(accountId);
      changes.push({ accountId, ...(enrichedAt ? { enrichedAt } : {}), ...(legacy.crmTargets.has(accountId) ? { crmTarget: true } : {}) });
    }
    await deps.history.record(organizationId, changes);
    // Only after the entries are written: a run stopped before this point moves the same objects again.
    await deleteKeys([...keys.markerKeys, ...keys.crmKeys]);
    result.organizations++;
    result.markers += keys.markerKeys.length;
    result.crmLists += keys.crmKeys.length;
    result.accounts += changes.length;
  }
  return result;
}
