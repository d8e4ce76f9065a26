/**
 * What an organization knows of individual accounts: when it last completed
 * an enrichment of each (recency exclusion) and which are CRM targets (CRM
 * exclusion). Decisions §4, §7; docs/data-model.md "Recency and CRM targets".
 *
 * Both live in S3 as per-organization lists, read once per launch evaluation
 * instead of one DynamoDB key per account:
 *
 * - a recency marker per enriched campaign, `recency/<org>/<completedAt>/<campaign>.txt`,
 *   a server-side copy of the campaign's eligible list. Keys sort by
 *   completion time, so an evaluation lists from the window's start and reads
 *   only the markers of completions inside it;
 * - CRM target lists under `crm/<org>/`, one per import, compacted into one
 *   when they pile up.
 *
 * No per-account item is written or read.
 */
import { randomUUID } from 'node:crypto';
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  NoSuchKey,
  type S3Client,
} from '@aws-sdk/client-s3';
import pMap from 'p-map';
import { createAccountListStore } from '../account-lists/account-list';
import { objectKeys } from '../objects';
import { listKeys } from '../storage/prefixes';

/** Facts about one account for one organization. */
export interface AccountFacts {
  /** ISO time the organization's last enrichment of the account completed (within the window read). */
  lastEnrichedAt?: string;
  crmTarget: boolean;
}

/** Options of {@link AccountHistoryStore.getFacts}. */
export interface FactsOptions {
  /** Read enrichment times too (default true); without it only CRM targets are read. */
  recency?: boolean;
  /**
   * Epoch milliseconds: only completions strictly after it are read (the
   * recency window's start, lib/enrichment/evaluate.ts). Default: every marker.
   */
  enrichedAfter?: number;
}

/** Data access for account enrichment times and CRM targets. */
export interface AccountHistoryStore {
  /** Facts for the given accounts (accounts with none are absent). */
  getFacts(organizationId: string, accountIds: readonly string[], options?: FactsOptions): Promise<Map<string, AccountFacts>>;
  /** Adds CRM targets; returns how many distinct IDs were written. */
  addCrmTargets(organizationId: string, accountIds: readonly string[]): Promise<number>;
  /**
   * Records that the accounts were enriched at `enrichedAt` by a campaign (a
   * marker holding these IDs; seeding and migration). Idempotent.
   */
  recordEnrichment(organizationId: string, accountIds: readonly string[], enrichedAt: string, campaignId: string): Promise<void>;
  /**
   * Records a completed campaign: its eligible list (object `eligibleObjectKey`)
   * is copied server-side to its recency marker. Idempotent (the copy is the same).
   */
  recordCompletion(organizationId: string, campaignId: string, completedAt: string, eligibleObjectKey: string): Promise<void>;
}

/** Marker and CRM objects read at once by one evaluation. */
const READ_CONCURRENCY = 8;
/** An organization's CRM lists are merged into one when there are more than this many. */
export const CRM_LISTS_BEFORE_COMPACTION = 8;

/** Completion time of a marker key (`recency/<org>/<completedAt>/<campaign>.txt`). */
const completedAtOf = (key: string): string => key.split('/')[2] ?? '';

/** Normalized ISO 8601 (toISOString), so marker keys sort by time. @throws RangeError for an invalid time. */
const isoOf = (time: string): string => new Date(time).toISOString();

/** Builds the S3 implementation of {@link AccountHistoryStore}. */
export function createAccountHistoryStore({ client, bucketName }: { client: S3Client; bucketName: string }): AccountHistoryStore {
  // Markers and CRM lists are account lists: one ID a line, written and read by the one owner of that format.
  const lists = createAccountListStore({ client, bucketName });
  const list = (prefix: string, startAfter?: string) => listKeys(client, bucketName, prefix, { startAfter });

  /** Streams an object's IDs into `onId`; false when the object is gone (deleted by a CRM compaction). */
  const readIds = async (key: string, onId: (id: string) => void): Promise<boolean> => {
    try {
      await lists.forEachId(key, onId);
      return true;
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return false;
      throw error;
    }
  };

  const putIds = (key: string, ids: readonly string[]) => lists.put(key, ids);

  /**
   * Every CRM list of the organization, read whole. A list deleted by a
   * concurrent compaction between the listing and its read was merged into a
   * list written before the deletion, so the organization is listed again.
   * @returns the lists' keys and `onId` called for each ID (duplicates included).
   */
  const readCrm = async (organizationId: string, onId: (id: string) => void): Promise<string[]> => {
    for (let attempt = 0; ; attempt++) {
      const ids: string[] = [];
      const keys = await list(objectKeys.crmPrefix(organizationId));
      const read = await pMap(keys, (key) => readIds(key, (id) => ids.push(id)), { concurrency: READ_CONCURRENCY });
      if (read.every(Boolean) || attempt >= 4) {
        for (const id of ids) onId(id);
        return keys;
      }
    }
  };

  return {
    async getFacts(organizationId, accountIds, options = {}) {
      const wanted = new Set(accountIds);
      const facts = new Map<string, AccountFacts>();
      const factsOf = (id: string) => {
        let current = facts.get(id);
        if (!current) facts.set(id, (current = { crmTarget: false }));
        return current;
      };
      const recency = async () => {
        const prefix = objectKeys.recencyPrefix(organizationId);
        const after = options.enrichedAfter;
        const startAfter = after === undefined ? undefined : objectKeys.recencyMarker(organizationId, new Date(after).toISOString());
        // The listing starts at the window's start; a marker completed exactly at it is listed and skipped (strictly after, decisions §4).
        const markers = (await list(prefix, startAfter)).filter((key) => after === undefined || Date.parse(completedAtOf(key)) > after);
        await pMap(
          markers,
          async (key) => {
            const completedAt = completedAtOf(key);
            await readIds(key, (id) => {
              if (!wanted.has(id)) return;
              const current = factsOf(id);
              if (!current.lastEnrichedAt || current.lastEnrichedAt < completedAt) current.lastEnrichedAt = completedAt;
            });
          },
          { concurrency: READ_CONCURRENCY },
        );
      };
      await Promise.all([
        options.recency ?? true ? recency() : undefined,
        readCrm(organizationId, (id) => {
          if (wanted.has(id)) factsOf(id).crmTarget = true;
        }),
      ]);
      return facts;
    },

    async addCrmTargets(organizationId, accountIds) {
      const distinct = [...new Set(accountIds)];
      if (distinct.length === 0) return 0;
      const listId = () => `${new Date().toISOString()}-${randomUUID()}`;
      await putIds(objectKeys.crmList(organizationId, listId()), distinct);
      // Compaction: merge every list into one, then delete only the lists merged (a concurrent import's new list stays).
      const keys = await list(objectKeys.crmPrefix(organizationId));
      if (keys.length > CRM_LISTS_BEFORE_COMPACTION) {
        const merged = new Set<string>();
        const read = await readCrm(organizationId, (id) => merged.add(id));
        await putIds(objectKeys.crmList(organizationId, listId()), [...merged]);
        for (let i = 0; i < read.length; i += 1000) {
          await client.send(new DeleteObjectsCommand({ Bucket: bucketName, Delete: { Objects: read.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
        }
      }
      return distinct.length;
    },

    async recordEnrichment(organizationId, accountIds, enrichedAt, campaignId) {
      await putIds(objectKeys.recencyMarker(organizationId, isoOf(enrichedAt), campaignId), accountIds);
    },

    async recordCompletion(organizationId, campaignId, completedAt, eligibleObjectKey) {
      await client.send(
        new CopyObjectCommand({
          Bucket: bucketName,
          Key: objectKeys.recencyMarker(organizationId, isoOf(completedAt), campaignId),
          CopySource: `${bucketName}/${eligibleObjectKey.split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
    },
  };
}
