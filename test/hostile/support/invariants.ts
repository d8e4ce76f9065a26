/**
 * The money-and-state invariants of the service (issue "nothing lost, no one
 * let in"; docs/README.md#a-campaigns-life-in-one-paragraph; docs/launch.md), checked over HTTP
 * (describe, list, get) and against the stores (organization item, stored
 * campaigns, ledger). Used by the hostile tests and by the soak runner, so it
 * returns violations rather than asserting.
 *
 * Per organization:
 * - balance ≥ 0; enrichingAccounts ≤ maxEnrichingAccounts (when asked);
 * - money is conserved: balance + Σ ledger of every campaign = starting
 *   balance + operator adjustments;
 * - enrichingAccounts = externalEnrichingAccounts + Σ eligible of the stored
 *   `enriching` campaigns (at quiescence);
 * Per campaign:
 * - `credits.charged` = Σ of its ledger entries; every ledger entry is well
 *   formed; at most one charge per attempt; no attempt refunded beyond its
 *   charge;
 * - the state is one the spec allows, with its presence rules, and the money
 *   that state implies (draft: net 0; enriching: the attempt's charge;
 *   enriched: accounts with contacts × rate, at most the charge).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { ddb } from '../../../lib/aws';
import { config } from '../../../lib/config';
import * as keys from '../../../lib/db/keys';
import { campaigns, enrichment, ledger as creditLedger, organizations } from '../../../lib/root';
import { CAMPAIGN_STATUSES, envelopeViolations, sendJson } from './contract';
import { SPAWNED_RUN_MS } from '../../support/spawned';

/** What the test knows about an organization's money. */
export interface OrganizationBook {
  organizationId: string;
  apiKey: string;
  /** smb credits at creation. */
  startingBalance: number;
  /** Net credits added (or removed) by operator adjustments that succeeded. */
  adjustments: number;
}

/** Options of {@link checkInvariants}. */
export interface InvariantOptions {
  /** No campaign may still be `enriching` (every attempt ended). */
  settled?: boolean;
  /** Nothing moves while reading: cross-item equalities are checked. */
  quiescent?: boolean;
  /** enrichingAccounts ≤ maxEnrichingAccounts must hold (operator changes only widened the headroom). */
  checkCeiling?: boolean;
  /** Concurrency of the reads (default 16). */
  concurrency?: number;
}

/** What was checked. */
export interface InvariantReport {
  violations: string[];
  organizations: number;
  campaigns: number;
  byStatus: Record<string, number>;
  ledgerEntries: number;
  /** Credits charged net across all campaigns. */
  charged: number;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const CAMPAIGN_ID = /^camp_[1-9A-HJ-NP-Za-km-z]{21}$/;

/** Every campaign ID of an organization, through list (all pages, newest first). */
async function listAll(baseUrl: string, book: OrganizationBook, v: string[]): Promise<{ id: string; status: string; createdAt: string }[]> {
  const items: { id: string; status: string; createdAt: string }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const res = await sendJson(baseUrl, '/v1/campaigns/list', book.apiKey, { limit: 100, ...(cursor ? { cursor } : {}) });
    v.push(...envelopeViolations('list', res));
    if (res.status !== 200) {
      v.push(`${book.organizationId}: list failed: ${res.text.slice(0, 200)}`);
      break;
    }
    items.push(...res.body.data.campaigns);
    cursor = res.body.data.nextCursor ?? undefined;
    if (!cursor) break;
  }
  const ids = items.map((i) => i.id);
  if (new Set(ids).size !== ids.length) v.push(`${book.organizationId}: list returned a campaign twice`);
  for (let i = 1; i < items.length; i++) {
    const [a, b] = [items[i - 1]!, items[i]!];
    if (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id))
      v.push(`${book.organizationId}: list not newest first at ${a.id}, ${b.id}`);
  }
  return items;
}

/** Launch locks of an organization's campaigns, from the raw items (the store's records leave the lock out). */
async function launchLocks(organizationId: string): Promise<Map<string, { expiresAt: string }>> {
  const locks = new Map<string, { expiresAt: string }>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :campaign)',
        ExpressionAttributeValues: { ':pk': keys.organization(organizationId).pk, ':campaign': 'CAMPAIGN#' },
        ProjectionExpression: 'sk, launchLock',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? [])
      if (item.launchLock) locks.set(String(item.sk).slice('CAMPAIGN#'.length), item.launchLock as { expiresAt: string });
    start = page.LastEvaluatedKey;
  } while (start);
  return locks;
}

/** Checks every invariant of the given organizations. */
export async function checkInvariants(
  baseUrl: string,
  books: readonly OrganizationBook[],
  options: InvariantOptions = {},
): Promise<InvariantReport> {
  const v: string[] = [];
  const report: InvariantReport = { violations: v, organizations: books.length, campaigns: 0, byStatus: {}, ledgerEntries: 0, charged: 0 };
  const concurrency = options.concurrency ?? 16;
  for (const book of books) {
    const org = book.organizationId;
    const described = await sendJson(baseUrl, '/v1/org/describe', book.apiKey);
    v.push(...envelopeViolations('describe', described));
    const listed = await listAll(baseUrl, book, v);
    const now = Date.now();
    const details = await pMap(
      listed,
      async (item) => {
        const [got, stored, ledger] = await Promise.all([
          sendJson(baseUrl, '/v1/campaigns/get', book.apiKey, { campaignId: item.id }),
          campaigns().get(org, item.id),
          creditLedger().entriesOf(org, item.id),
        ]);
        return { item, got, stored, ledger };
      },
      { concurrency },
    );
    const record = await organizations().get(org);
    const locks = await launchLocks(org);
    if (!record) {
      v.push(`${org}: organization item missing`);
      continue;
    }
    if (record.smbCredits < 0) v.push(`${org}: negative balance ${record.smbCredits}`);
    if (record.enrichingAccounts < 0) v.push(`${org}: negative enrichingAccounts ${record.enrichingAccounts}`);
    if (options.checkCeiling && record.enrichingAccounts > record.maxEnrichingAccounts) {
      v.push(`${org}: ceiling exceeded: ${record.enrichingAccounts} enriching > ${record.maxEnrichingAccounts}`);
    }
    if (described.status === 200) {
      const d = described.body.data;
      if (d.organization.id !== org) v.push(`${org}: describe answered for ${d.organization.id}`);
      if (d.credits.smb < 0) v.push(`${org}: describe shows a negative balance`);
      if (options.quiescent && (d.credits.smb !== record.smbCredits || d.enrichment.enrichingAccounts !== record.enrichingAccounts)) {
        v.push(`${org}: describe ${JSON.stringify(d)} disagrees with the organization item`);
      }
    } else v.push(`${org}: describe failed with ${described.status}`);

    let ledgerTotal = 0;
    let enrichingEligible = 0;
    for (const { item, got, stored, ledger } of details) {
      const id = item.id;
      const at = `${org}/${id}`;
      report.campaigns++;
      report.ledgerEntries += ledger.length;
      v.push(...envelopeViolations('get', got));
      if (!CAMPAIGN_ID.test(id)) v.push(`${at}: malformed campaign ID`);
      if (!stored) {
        v.push(`${at}: listed but not stored`);
        continue;
      }
      if (got.status !== 200) {
        v.push(`${at}: get answered ${got.status}`);
        continue;
      }
      const c = got.body.data;
      report.byStatus[c.status] = (report.byStatus[c.status] ?? 0) + 1;
      // Net charge of the campaign: −Σ amounts (a charge is negative, a refund positive).
      const sum = -ledger.reduce((s, e) => s + e.amount, 0);
      ledgerTotal += sum;
      report.charged += sum;
      if (options.quiescent && c.status !== item.status) v.push(`${at}: list says ${item.status}, get says ${c.status}`);
      if (!CAMPAIGN_STATUSES.includes(c.status)) v.push(`${at}: status ${c.status} is not a campaign state`);
      if (options.settled && c.status === 'enriching') v.push(`${at}: still enriching after every attempt should have ended`);
      if (c.credits.charged !== sum)
        v.push(
          `${at}: credits.charged ${c.credits.charged} ≠ ledger sum ${sum} (${JSON.stringify(ledger.map((e) => [e.kind, e.reason, e.amount]))})`,
        );
      if (c.credits.charged < 0) v.push(`${at}: negative charge`);
      if (options.quiescent && c.credits.remaining !== record.smbCredits)
        v.push(`${at}: credits.remaining ${c.credits.remaining} ≠ balance ${record.smbCredits}`);

      // Ledger entries: well formed, one charge per attempt, refunds never beyond the charge.
      const attempts = new Map<string, { charge: number; charges: number; refund: number; reasons: string[] }>();
      for (const e of ledger) {
        if (e.organizationId !== org || e.campaignId !== id) v.push(`${at}: ledger entry of another campaign ${JSON.stringify(e)}`);
        if (!ISO_UTC.test(e.createdAt)) v.push(`${at}: ledger entry time ${e.createdAt}`);
        if (!Number.isSafeInteger(e.amount)) v.push(`${at}: ledger amount ${e.amount}`);
        const attemptId = e.attemptId ?? '(none)';
        if (e.attemptId === null) v.push(`${at}: campaign entry without an attempt ${JSON.stringify(e)}`);
        const a = attempts.get(attemptId) ?? { charge: 0, charges: 0, refund: 0, reasons: [] };
        if (e.kind === 'charge') {
          if (e.reason !== 'launch' || e.amount >= 0) v.push(`${at}: odd charge ${JSON.stringify(e)}`);
          a.charge += -e.amount;
          a.charges++;
        } else if (e.kind === 'refund') {
          if (!['no_contacts_found', 'failed', 'canceled'].includes(e.reason) || e.amount <= 0)
            v.push(`${at}: odd refund ${JSON.stringify(e)}`);
          a.refund += e.amount;
          a.reasons.push(e.reason);
        } else v.push(`${at}: ledger entry kind ${String(e.kind)}`);
        attempts.set(attemptId, a);
      }
      for (const [attemptId, a] of attempts) {
        if (a.charges !== 1) v.push(`${at}: attempt ${attemptId} charged ${a.charges} times`);
        if (a.refund > a.charge) v.push(`${at}: attempt ${attemptId} refunded ${a.refund} > charged ${a.charge}`);
        const terminal = a.reasons.filter((r) => r === 'failed' || r === 'canceled');
        if (terminal.length > 1) v.push(`${at}: attempt ${attemptId} compensated ${terminal.length} times`);
        if (terminal.length === 1 && a.refund !== a.charge)
          v.push(`${at}: attempt ${attemptId} compensated but refunded ${a.refund} of ${a.charge}`);
        if (terminal.length === 1 && a.reasons.includes('no_contacts_found'))
          v.push(`${at}: attempt ${attemptId} both completed and compensated`);
      }

      // The state and what it implies.
      const has = (field: string) => Object.hasOwn(c, field);
      const current = stored.attempt;
      switch (c.status) {
        case 'draft':
          if (sum !== 0) v.push(`${at}: draft with net charge ${sum}`);
          if (has('completedAt') || has('results') || has('resultsExpireAt')) v.push(`${at}: draft with completion fields`);
          if (attempts.size > 0 && c.lastEnrichment === null)
            v.push(`${at}: draft after ${attempts.size} attempt(s) without lastEnrichment`);
          if (c.lastEnrichment !== null) {
            const last = c.lastEnrichment;
            if (!['failed', 'canceled'].includes(last.status) || last.refunded !== true || !ISO_UTC.test(last.startedAt))
              v.push(`${at}: lastEnrichment ${JSON.stringify(last)}`);
          }
          if (current) v.push(`${at}: draft still holds an attempt`);
          break;
        case 'enriching': {
          if (!current) {
            // Interface launches are counted by operators under externalEnrichingAccounts.
            if (c.createdVia === 'api') v.push(`${at}: enriching without an attempt`);
            break;
          }
          enrichingEligible += current.eligible;
          if (c.credits.charged !== current.charged)
            v.push(`${at}: enriching, charged ${c.credits.charged} ≠ attempt charge ${current.charged}`);
          if (c.accounts.eligible !== current.eligible)
            v.push(`${at}: enriching, eligible ${c.accounts.eligible} ≠ attempt ${current.eligible}`);
          if (has('completedAt') || has('results') || has('resultsExpireAt')) v.push(`${at}: enriching with completion fields`);
          break;
        }
        case 'enriched': {
          if (!has('completedAt') || !has('results') || !has('resultsExpireAt'))
            v.push(`${at}: enriched without completedAt/results/resultsExpireAt`);
          if (has('resultsExpireAt') && Date.parse(c.resultsExpireAt) <= now) v.push(`${at}: enriched past resultsExpireAt`);
          if (!current) {
            v.push(`${at}: enriched without its attempt`);
            break;
          }
          const r = c.results;
          if (r) {
            const withContact = Math.round(r.pctAccountsWithContact * r.totalAccounts);
            if (r.totalAccounts !== current.eligible) v.push(`${at}: enriched ${r.totalAccounts} accounts of ${current.eligible} eligible`);
            if (c.credits.charged !== withContact * current.creditsPerAccount) {
              v.push(
                `${at}: enriched, charged ${c.credits.charged} ≠ ${withContact} accounts with contacts × ${current.creditsPerAccount}`,
              );
            }
          }
          if (c.credits.charged > current.charged) v.push(`${at}: enriched, charged more than at launch`);
          break;
        }
        case 'expired':
          if (!has('resultsExpireAt') || Date.parse(c.resultsExpireAt) > now) v.push(`${at}: expired before resultsExpireAt`);
          if (has('completedAt') || has('results')) v.push(`${at}: expired with completedAt/results`);
          break;
        case 'tam_only':
          if (c.createdVia === 'api') v.push(`${at}: tam_only campaign created via api`);
          break;
      }
      // A lock may outlive a failed release, but never beyond 60 s (docs/errors.md); at rest none is held on a launched campaign.
      const lock = locks.get(id);
      if (lock && Date.parse(lock.expiresAt) > now + 60_000 + 1_000) v.push(`${at}: launch lock held beyond 60 s (${lock.expiresAt})`);
      if (lock && options.quiescent && c.status !== 'draft') v.push(`${at}: a ${c.status} campaign still holds a launch lock`);
    }
    // docs/launch.md#the-credit-ledger: the balance is the sum of the organization's whole ledger (grant, adjustments, charges, refunds).
    const audit = await creditLedger().audit(org);
    if (options.quiescent && audit && audit.balance !== audit.ledgerSum)
      v.push(`${org}: balance ${audit.balance} ≠ ledger sum ${audit.ledgerSum}`);
    if (record.smbCredits + ledgerTotal !== book.startingBalance + book.adjustments) {
      v.push(
        `${org}: money not conserved: balance ${record.smbCredits} + charged ${ledgerTotal} ≠ starting ${book.startingBalance} + adjustments ${book.adjustments}`,
      );
    }
    if (options.quiescent && record.enrichingAccounts !== record.externalEnrichingAccounts + enrichingEligible) {
      v.push(
        `${org}: enrichingAccounts ${record.enrichingAccounts} ≠ external ${record.externalEnrichingAccounts} + enriching campaigns ${enrichingEligible}`,
      );
    }
  }
  return report;
}

/**
 * Waits until none of the organizations' campaigns is `enriching` (every
 * attempt ended), reading through the store. @returns the IDs still enriching
 * at the deadline (empty when settled).
 */
export async function waitUntilSettled(
  books: readonly OrganizationBook[],
  campaignIds: ReadonlyMap<string, readonly string[]>,
  timeoutMs = SPAWNED_RUN_MS,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending: string[] = [];
    for (const book of books) {
      const ids = campaignIds.get(book.organizationId) ?? [];
      const records = await pMap(ids, (id) => campaigns().get(book.organizationId, id), { concurrency: 16 });
      records.forEach((r, i) => {
        if (r?.status === 'enriching') pending.push(ids[i]!);
      });
    }
    if (pending.length === 0 || Date.now() > deadline) return pending;
    await new Promise((r) => setTimeout(r, 150));
  }
}
