/**
 * The test twin's account history (docs/test-mode.md): which accounts count as
 * recently enriched and which as CRM targets, decided by the account ID
 * alone (lib/test-mode/accounts.ts), with no storage. It has the shape of the
 * live account history (lib/history/store.ts `AccountHistoryStore`, which
 * sits above this floor: the composition root checks the fit), so the launch
 * evaluation and the workflow's recording step run unchanged on it.
 *
 * - `test_crm_…` is a CRM target: `crm_excluded`.
 * - `test_recent_…` was enriched a minute before the read: with
 *   `excludeEnrichedWithinDays` ≥ 1 its launch falls inside the window,
 *   `recently_enriched`; with 0 or null it is eligible.
 * - Completions are not recorded (the twin's recency is the IDs'), nor are
 *   CRM imports: `test_found_…` stays eligible however often it is enriched;
 *   completions pending on the organization item (`options.pending`) are
 *   ignored for the same reason.
 */
import { testAccountKind } from './accounts';

/** How long before the read a `test_recent_` account was enriched (milliseconds): inside any window of 1 day or more. */
export const TEST_RECENT_AGE_MS = 60_000;

/** Facts about one test account, as lib/history/store.ts `AccountFacts`. */
export interface TestAccountFacts {
  /** ISO 8601: a minute before the read, for `test_recent_` accounts (when recency is read). */
  lastEnrichedAt?: string;
  crmTarget: boolean;
}

/** The test twin's account history, shaped as lib/history/store.ts `AccountHistoryStore`. */
export const testAccountHistory = {
  /**
   * Facts of the given test accounts (accounts with none are absent).
   * @param options.recency - read enrichment times (default true).
   * @param options.enrichedAfter - epoch ms: only enrichments strictly after it count.
   */
  async getFacts(
    _organizationId: string,
    accountIds: readonly string[],
    options: { recency?: boolean; enrichedAfter?: number; pending?: readonly unknown[] } = {},
  ): Promise<Map<string, TestAccountFacts>> {
    const facts = new Map<string, TestAccountFacts>();
    const enrichedAt = Date.now() - TEST_RECENT_AGE_MS;
    const recency = (options.recency ?? true) && (options.enrichedAfter === undefined || enrichedAt > options.enrichedAfter);
    for (const id of accountIds) {
      const kind = testAccountKind(id);
      if (kind === 'crm') facts.set(id, { crmTarget: true });
      else if (kind === 'recent' && recency) facts.set(id, { crmTarget: false, lastEnrichedAt: new Date(enrichedAt).toISOString() });
    }
    return facts;
  },
  /** CRM targets of the twin are its `test_crm_` IDs: nothing is added. @returns 0. */
  async addCrmTargets(_organizationId: string, _accountIds: readonly string[]): Promise<number> {
    return 0;
  },
  /** Nothing is recorded: the twin's recency is its `test_recent_` IDs. */
  async recordEnrichment(_organizationId: string, _accountIds: readonly string[], _enrichedAt: string): Promise<void> {},
  /** Nothing is recorded: the twin's recency is its `test_recent_` IDs. */
  async recordCompletion(_organizationId: string, _campaignId: string, _completedAt: string, _eligibleObjectKey: string): Promise<void> {},
  /** Nothing is recorded (migration, seeding): the twin's history is its IDs'. @returns 0 buckets rewritten. */
  async record(_organizationId: string, _changes: Iterable<unknown>): Promise<number> {
    return 0;
  },
  /** The twin stores no history: one empty bucket, no entries, no growth. */
  async state(_organizationId: string): Promise<{ buckets: number; entries: number; growTo: number }> {
    return { buckets: 1, entries: 0, growTo: 1 };
  },
  /** The twin stores no buckets: nothing to re-encode. @returns false. */
  async reencode(_organizationId: string, _bucket: number): Promise<boolean> {
    return false;
  },
};
