/**
 * Completions still recording (lib/history/recency-pending.ts) count in the
 * account history's read (lib/history/store.ts getFacts `pending`), against
 * DynamoDB Local and s3rver: their accounts read as enriched at the
 * campaign's `completedAt` inside the window, and never hide a newer time
 * already recorded (docs/launch.md). The test twin's history ignores them: its
 * recency is decided by the account IDs (lib/test-mode/history.ts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { accountHistory, accountLists } from '../lib/root';
import { testAccountHistory } from '../lib/test-mode/history';

const DAY_MS = 86_400_000;
const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

describe('pending completions in the account history read', () => {
  it('count inside the window at completedAt, outside it not at all, and never hide a newer recorded time', async () => {
    const organizationId = `org_pending_${randomUUID()}`;
    const inside = `pending/${organizationId}/inside.txt`;
    const outside = `pending/${organizationId}/outside.txt`;
    const older = `pending/${organizationId}/older.txt`;
    await accountLists().put(inside, ['fresh', 'stale', 'crm']);
    await accountLists().put(outside, ['untouched']);
    await accountLists().put(older, ['newer']);
    await accountHistory().recordEnrichment(organizationId, ['stale'], iso(NOW - 100 * DAY_MS));
    await accountHistory().recordEnrichment(organizationId, ['newer'], iso(NOW - DAY_MS));
    await accountHistory().addCrmTargets(organizationId, ['crm']);
    const pending = [
      { campaignId: 'camp_inside', completedAt: iso(NOW - 2 * DAY_MS), eligibleObjectKey: inside },
      { campaignId: 'camp_outside', completedAt: iso(NOW - 60 * DAY_MS), eligibleObjectKey: outside },
      { campaignId: 'camp_older', completedAt: iso(NOW - 20 * DAY_MS), eligibleObjectKey: older },
    ];
    const facts = await accountHistory().getFacts(organizationId, ['fresh', 'stale', 'crm', 'untouched', 'newer'], {
      recency: true,
      enrichedAfter: NOW - 30 * DAY_MS,
      pending,
    });
    expect(facts.get('fresh')).toEqual({ crmTarget: false, lastEnrichedAt: iso(NOW - 2 * DAY_MS) });
    expect(facts.get('stale')).toEqual({ crmTarget: false, lastEnrichedAt: iso(NOW - 2 * DAY_MS) });
    expect(facts.get('crm')).toEqual({ crmTarget: true, lastEnrichedAt: iso(NOW - 2 * DAY_MS) });
    expect(facts.get('untouched')).toBeUndefined();
    expect(facts.get('newer')).toEqual({ crmTarget: false, lastEnrichedAt: iso(NOW - DAY_MS) });
  });

  it('are not read without a recency window', async () => {
    const organizationId = `org_pending_${randomUUID()}`;
    const pending = [
      { campaignId: 'camp_gone', completedAt: iso(NOW - DAY_MS), eligibleObjectKey: `pending/${organizationId}/never-written.txt` },
    ];
    // The list does not exist: reading it would throw.
    const facts = await accountHistory().getFacts(organizationId, ['a'], { recency: false, pending });
    expect(facts.size).toBe(0);
  });

  it("are ignored by the test twin's history, whose recency is its IDs'", async () => {
    const pending = [{ campaignId: 'camp_x', completedAt: iso(NOW - 1000), eligibleObjectKey: 'pending/none.txt' }];
    const facts = await testAccountHistory.getFacts('org_test_x', ['test_found_1', 'test_recent_1'], {
      recency: true,
      enrichedAfter: NOW - DAY_MS,
      pending,
    });
    expect(facts.has('test_found_1')).toBe(false);
    expect(facts.get('test_recent_1')?.lastEnrichedAt).toBeDefined();
  });
});
