/**
 * What an organization knows of individual accounts: when it last completed
 * an enrichment of each (recency exclusion) and which are CRM targets (CRM
 * exclusion). Decisions §4, §7.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGet, batchPut } from '../db/batch';
import { keys } from '../db/table';

/** Facts about one account for one organization. */
export interface AccountFacts {
  /** ISO time the organization's last enrichment of the account completed. */
  lastEnrichedAt?: string;
  crmTarget: boolean;
}

/** Data access for account enrichment times and CRM targets. */
export interface AccountHistoryStore {
  /**
   * Facts for the given accounts (accounts with none are absent).
   * @param options.recency - read enrichment times too (default true); without it only CRM targets are read.
   */
  getFacts(organizationId: string, accountIds: readonly string[], options?: { recency?: boolean }): Promise<Map<string, AccountFacts>>;
  /** Adds CRM targets; returns how many IDs were written. */
  addCrmTargets(organizationId: string, accountIds: readonly string[]): Promise<number>;
  /** Records that the accounts were enriched at `enrichedAt` by a campaign. Idempotent. */
  recordEnrichment(organizationId: string, accountIds: readonly string[], enrichedAt: string, campaignId: string): Promise<void>;
}

/** Builds the DynamoDB implementation of {@link AccountHistoryStore}. */
export function createAccountHistoryStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): AccountHistoryStore {
  return {
    async getFacts(organizationId, accountIds, options = {}) {
      const recency = options.recency ?? true;
      const items = await batchGet(
        client,
        tableName,
        accountIds.flatMap((id) => (recency ? [keys.accountEnrichment(organizationId, id), keys.crmTarget(organizationId, id)] : [keys.crmTarget(organizationId, id)])),
        ['accountId', 'lastEnrichedAt'],
      );
      const facts = new Map<string, AccountFacts>();
      for (const item of items) {
        const id = String(item.accountId);
        const current = facts.get(id) ?? { crmTarget: false };
        if (item.sk === 'CRM') current.crmTarget = true;
        else current.lastEnrichedAt = String(item.lastEnrichedAt);
        facts.set(id, current);
      }
      return facts;
    },

    async addCrmTargets(organizationId, accountIds) {
      const distinct = [...new Set(accountIds)];
      const addedAt = new Date().toISOString();
      await batchPut(client, tableName, distinct.map((accountId) => ({ ...keys.crmTarget(organizationId, accountId), type: 'crmTarget', accountId, addedAt })));
      return distinct.length;
    },

    async recordEnrichment(organizationId, accountIds, enrichedAt, campaignId) {
      await batchPut(
        client,
        tableName,
        accountIds.map((accountId) => ({ ...keys.accountEnrichment(organizationId, accountId), type: 'accountEnrichment', accountId, lastEnrichedAt: enrichedAt, campaignId })),
      );
    },
  };
}
