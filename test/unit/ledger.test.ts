/**
 * Unit tests of the credit ledger's pure parts (docs/launch.md#the-credit-ledger): entry signs
 * and derived IDs, sums, the transaction items of one movement, the
 * campaign-side change, and reconciliation over an in-memory audit port.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LEDGER_REASONS,
  balanceCovers,
  campaignCreditsChange,
  ledgerEntries,
  ledgerItem,
  ledgerPut,
  movementItems,
  sumOf,
  toLedgerEntry,
  type LedgerEntry,
} from '../../lib/credits/ledger';
import { reconcileCredits, totalDrift } from '../../lib/credits/reconcile';
import type { LedgerAudit } from '../../lib/credits/store';
import * as keys from '../../lib/db/keys';
import { ID_ALPHABET } from '../../lib/ids';

const TABLE = 'unit-table';
const AT = '2025-06-01T10:00:00.000Z';
const ORG = 'org_1111111111111111111111';
const CAMP = 'camp_2222222222222222222222';
const ATT = 'att_3333333333333333333333';
const ENTRY_ID = new RegExp(`^led_[${ID_ALPHABET}]{21}$`);
const REFUND_REASONS = LEDGER_REASONS.refund;

const charge = (
  credits: number,
  over: Partial<{ campaignId: string; attemptId: string; organizationId: string; createdAt: string }> = {},
) => ledgerEntries.charge({ organizationId: ORG, campaignId: CAMP, attemptId: ATT, credits, createdAt: AT, ...over });
const refund = (
  credits: number,
  reason: (typeof REFUND_REASONS)[number],
  over: Partial<{ campaignId: string; attemptId: string; createdAt: string }> = {},
) => ledgerEntries.refund({ organizationId: ORG, campaignId: CAMP, attemptId: ATT, credits, reason, createdAt: AT, ...over });

describe('ledgerEntries (sign conventions)', () => {
  it('a charge is negative, of kind charge and reason launch, tied to its campaign and attempt', () => {
    expect(charge(25)).toEqual({
      id: expect.stringMatching(ENTRY_ID),
      organizationId: ORG,
      createdAt: AT,
      kind: 'charge',
      reason: 'launch',
      amount: -25,
      campaignId: CAMP,
      attemptId: ATT,
      note: null,
    });
  });

  it.each(REFUND_REASONS)('a refund (%s) is positive, tied to its campaign and attempt', (reason) => {
    expect(refund(7, reason)).toEqual({
      id: expect.stringMatching(ENTRY_ID),
      organizationId: ORG,
      createdAt: AT,
      kind: 'refund',
      reason,
      amount: 7,
      campaignId: CAMP,
      attemptId: ATT,
      note: null,
    });
  });

  it('the initial grant is a positive adjustment of no campaign', () => {
    expect(ledgerEntries.initialGrant({ organizationId: ORG, credits: 1000, createdAt: AT })).toEqual({
      id: expect.stringMatching(ENTRY_ID),
      organizationId: ORG,
      createdAt: AT,
      kind: 'adjustment',
      reason: 'initial_grant',
      amount: 1000,
      campaignId: null,
      attemptId: null,
      note: null,
    });
  });

  it('an operator adjustment keeps its sign and note (null when none)', () => {
    const minus = ledgerEntries.adjustment({
      organizationId: ORG,
      credits: -40,
      note: 'goodwill reversal',
      createdAt: AT,
      movementId: 'm1',
    });
    expect(minus).toMatchObject({
      kind: 'adjustment',
      reason: 'operator',
      amount: -40,
      note: 'goodwill reversal',
      campaignId: null,
      attemptId: null,
    });
    expect(ledgerEntries.adjustment({ organizationId: ORG, credits: 15, createdAt: AT, movementId: 'm2' })).toMatchObject({
      amount: 15,
      note: null,
    });
    expect(ledgerEntries.adjustment({ organizationId: ORG, credits: 15, note: null, createdAt: AT, movementId: 'm2' }).note).toBeNull();
  });

  it('signs any positive amount: charge −n, refund +n, grant +n', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(...REFUND_REASONS), (n, reason) => {
        expect(charge(n).amount).toBe(-n);
        expect(refund(n, reason).amount).toBe(n);
        expect(ledgerEntries.initialGrant({ organizationId: ORG, credits: n, createdAt: AT }).amount).toBe(n);
        expect(sumOf([charge(n), refund(n, reason)])).toBe(0);
      }),
    );
  });
});

describe('derived entry IDs', () => {
  it('are the same for the same movement whatever its amount or time (a retried step writes the same entry)', () => {
    expect(charge(10).id).toBe(charge(99, { createdAt: '2030-01-01T00:00:00.000Z' }).id);
    expect(refund(3, 'failed').id).toBe(refund(30, 'failed', { createdAt: '2030-01-01T00:00:00.000Z' }).id);
    expect(ledgerEntries.initialGrant({ organizationId: ORG, credits: 1, createdAt: AT }).id).toBe(
      ledgerEntries.initialGrant({ organizationId: ORG, credits: 2, createdAt: '2030-01-01T00:00:00.000Z' }).id,
    );
    expect(ledgerEntries.adjustment({ organizationId: ORG, credits: 1, createdAt: AT, movementId: 'm' }).id).toBe(
      ledgerEntries.adjustment({ organizationId: ORG, credits: -1, createdAt: AT, movementId: 'm' }).id,
    );
  });

  it('differ between a charge and each refund reason of the same attempt, and between attempts and campaigns', () => {
    const ids = [
      charge(1).id,
      ...REFUND_REASONS.map((reason) => refund(1, reason).id),
      charge(1, { attemptId: 'att_other' }).id,
      charge(1, { campaignId: 'camp_other' }).id,
      refund(1, 'failed', { attemptId: 'att_other' }).id,
      ledgerEntries.initialGrant({ organizationId: ORG, credits: 1, createdAt: AT }).id,
      ledgerEntries.initialGrant({ organizationId: 'org_other', credits: 1, createdAt: AT }).id,
      ledgerEntries.adjustment({ organizationId: ORG, credits: 1, createdAt: AT, movementId: 'm1' }).id,
      ledgerEntries.adjustment({ organizationId: ORG, credits: 1, createdAt: AT, movementId: 'm2' }).id,
    ];
    for (const id of ids) expect(id).toMatch(ENTRY_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are `led_` + 21 base58 characters, equal exactly when (campaign, attempt, kind, reason) are equal', () => {
    const movement = fc.record({
      campaignId: fc.string({ minLength: 1, maxLength: 12 }),
      attemptId: fc.string({ minLength: 1, maxLength: 12 }),
      kind: fc.constantFrom('charge' as const, 'refund' as const),
      reason: fc.constantFrom(...REFUND_REASONS),
    });
    const entryOf = (m: { campaignId: string; attemptId: string; kind: 'charge' | 'refund'; reason: (typeof REFUND_REASONS)[number] }) =>
      m.kind === 'charge' ? charge(1, m) : refund(1, m.reason, m);
    const key = (m: { campaignId: string; attemptId: string; kind: string; reason: string }) =>
      JSON.stringify([m.campaignId, m.attemptId, m.kind, m.kind === 'charge' ? 'launch' : m.reason]);
    fc.assert(
      fc.property(movement, movement, (a, b) => {
        const [ea, eb] = [entryOf(a), entryOf(b)];
        expect(ea.id).toMatch(ENTRY_ID);
        expect(ea.id === eb.id).toBe(key(a) === key(b));
        expect(entryOf({ ...a }).id).toBe(ea.id);
      }),
      { numRuns: 500 },
    );
  });
});

describe('sumOf', () => {
  it('is 0 for no entries and the plain sum otherwise', () => {
    expect(sumOf([])).toBe(0);
    expect(sumOf([{ amount: 1000 }, { amount: -30 }, { amount: 12 }, { amount: -5 }])).toBe(977);
  });

  it('is additive over concatenation and independent of order', () => {
    const amounts = fc.array(
      fc.integer({ min: -100_000, max: 100_000 }).map((amount) => ({ amount })),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(amounts, amounts, (a, b) => {
        expect(sumOf([...a, ...b])).toBe(sumOf(a) + sumOf(b));
        expect(sumOf([...b, ...a].reverse())).toBe(sumOf([...a, ...b]));
        expect(sumOf(a)).toBe(a.reduce((t, e) => t + e.amount, 0));
      }),
    );
  });

  it('keeps balance = Σ entries and creditsCharged = −Σ campaign entries over any history of charges and refunds', () => {
    // One organization, a grant, then per campaign: a charge and refunds that never exceed it.
    const history = fc.array(
      fc.record({
        charged: fc.integer({ min: 1, max: 500 }),
        refunds: fc.array(fc.tuple(fc.constantFrom(...REFUND_REASONS), fc.integer({ min: 1, max: 100 })), { maxLength: 3 }),
      }),
      { maxLength: 8 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), history, (grant, campaigns) => {
        let balance = 0;
        const entries: LedgerEntry[] = [];
        const apply = (entry: LedgerEntry) => {
          balance += entry.amount;
          entries.push(entry);
        };
        apply(ledgerEntries.initialGrant({ organizationId: ORG, credits: grant, createdAt: AT }));
        campaigns.forEach((c, i) => {
          const campaignId = `camp_${i}`;
          let creditsCharged = 0;
          const own: LedgerEntry[] = [];
          const record = (entry: LedgerEntry) => {
            apply(entry);
            own.push(entry);
            creditsCharged += campaignCreditsChange(entry).increment?.creditsCharged ?? 0;
          };
          record(charge(c.charged, { campaignId }));
          let left = c.charged;
          c.refunds.forEach(([reason, credits], j) => {
            const amount = Math.min(credits, left);
            if (amount === 0) return;
            left -= amount;
            record(refund(amount, reason, { campaignId, attemptId: `${ATT}_${j}` }));
          });
          expect(creditsCharged + sumOf(own)).toBe(0);
          expect(creditsCharged).toBe(left);
        });
        expect(balance).toBe(sumOf(entries));
        expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('campaignCreditsChange', () => {
  it('is −amount on creditsCharged: a charge raises it, a refund lowers it', () => {
    expect(campaignCreditsChange(charge(12))).toEqual({ increment: { creditsCharged: 12 } });
    expect(campaignCreditsChange(refund(5, 'no_contacts_found'))).toEqual({ increment: { creditsCharged: -5 } });
  });

  it('changes nothing for an amount of 0', () => {
    expect(campaignCreditsChange(refund(0, 'no_contacts_found'))).toEqual({ increment: {} });
  });
});

describe('ledger items', () => {
  it('store the entry with its keys and list-index keys, and map back to the same entry', () => {
    const entries = [
      charge(4),
      refund(4, 'canceled'),
      ledgerEntries.initialGrant({ organizationId: ORG, credits: 10, createdAt: AT }),
      ledgerEntries.adjustment({ organizationId: ORG, credits: -2, note: 'n', createdAt: AT, movementId: 'm' }),
    ];
    for (const entry of entries) {
      const item = ledgerItem(entry);
      expect(item).toMatchObject({ ...keys.ledgerEntry(ORG, entry), ...keys.ledgerIndexes(ORG, entry), type: 'ledgerEntry', ...entry });
      expect(toLedgerEntry(item)).toEqual(entry);
      expect(toLedgerEntry(item, ORG)).toEqual(entry);
    }
  });

  it('are put only if the same movement was not recorded before', () => {
    const entry = charge(3);
    expect(ledgerPut(TABLE, entry)).toEqual({
      Put: { TableName: TABLE, Item: ledgerItem(entry), ConditionExpression: 'attribute_not_exists(pk)' },
    });
  });
});

describe('movementItems', () => {
  it('updates the balance by the amount, counts the entry, and puts it, in that order', () => {
    const entry = charge(30);
    const items = movementItems(TABLE, entry, { condition: balanceCovers(30) });
    expect(items).toHaveLength(2);
    const update = items[0]!.Update!;
    expect(update.TableName).toBe(TABLE);
    expect(update.Key).toEqual(keys.organization(ORG));
    expect(update.UpdateExpression).toBe(
      'SET #ledgerWrittenAt = :s_ledgerWrittenAt, #smbCredits = if_not_exists(#smbCredits, :zero) + :i_smbCredits, #ledgerEntries = if_not_exists(#ledgerEntries, :zero) + :i_ledgerEntries',
    );
    expect(update.ExpressionAttributeNames).toEqual({
      '#ledgerWrittenAt': 'ledgerWrittenAt',
      '#smbCredits': 'smbCredits',
      '#ledgerEntries': 'ledgerEntries',
    });
    expect(update.ExpressionAttributeValues).toEqual({
      ':c_required': 30,
      ':c_writtenAt': entry.createdAt,
      ':s_ledgerWrittenAt': entry.createdAt,
      ':i_smbCredits': -30,
      ':i_ledgerEntries': 1,
      ':zero': 0,
    });
    // The ledger's clock (issue #31): the entry is later than every entry written before it.
    expect(update.ConditionExpression).toBe(
      '(smbCredits >= :c_required) AND (attribute_not_exists(ledgerWrittenAt) OR ledgerWrittenAt < :c_writtenAt)',
    );
    expect(update.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(items[1]).toEqual(ledgerPut(TABLE, entry));
  });

  it('carries the other changes of the same write (capacity) alongside the balance', () => {
    const entry = refund(8, 'failed');
    const items = movementItems(TABLE, entry, {
      alsoChange: { increment: { enrichingAccounts: -8 }, set: { updatedAt: AT }, remove: ['launchLock'] },
    });
    expect(items).toHaveLength(2);
    const update = items[0]!.Update!;
    expect(update.ConditionExpression).toBe('attribute_not_exists(ledgerWrittenAt) OR ledgerWrittenAt < :c_writtenAt');
    expect(update.UpdateExpression).toBe(
      'SET #updatedAt = :s_updatedAt, #ledgerWrittenAt = :s_ledgerWrittenAt, #enrichingAccounts = if_not_exists(#enrichingAccounts, :zero) + :i_enrichingAccounts, #smbCredits = if_not_exists(#smbCredits, :zero) + :i_smbCredits, #ledgerEntries = if_not_exists(#ledgerEntries, :zero) + :i_ledgerEntries REMOVE #launchLock',
    );
    expect(update.ExpressionAttributeValues).toMatchObject({ ':i_enrichingAccounts': -8, ':i_smbCredits': 8, ':i_ledgerEntries': 1 });
    expect(items[1]!.Put!.Item).toEqual(ledgerItem(entry));
  });

  it('writes no entry and leaves the balance and counter alone for an amount of 0', () => {
    const items = movementItems(TABLE, refund(0, 'no_contacts_found'), { alsoChange: { increment: { enrichingAccounts: -5 } } });
    expect(items).toHaveLength(1);
    expect(items[0]!.Put).toBeUndefined();
    const update = items[0]!.Update!;
    expect(update.UpdateExpression).toBe('SET #enrichingAccounts = if_not_exists(#enrichingAccounts, :zero) + :i_enrichingAccounts');
    expect(Object.values(update.ExpressionAttributeNames ?? {})).not.toContain('smbCredits');
    expect(Object.values(update.ExpressionAttributeNames ?? {})).not.toContain('ledgerEntries');
  });

  it('for any amount: an entry Put exactly when the amount is not 0, and the balance moves by the amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000, max: 10_000 }), (amount) => {
        const entry = ledgerEntries.adjustment({ organizationId: ORG, credits: amount, createdAt: AT, movementId: 'm' });
        const items = movementItems(TABLE, entry, { alsoChange: { increment: { enrichingAccounts: 0 } } });
        const puts = items.filter((item) => item.Put);
        expect(items[0]!.Update!.Key).toEqual(keys.organization(ORG));
        expect(puts).toHaveLength(amount === 0 ? 0 : 1);
        expect(items[0]!.Update!.ExpressionAttributeValues?.[':i_smbCredits']).toBe(amount === 0 ? undefined : amount);
        expect(items[0]!.Update!.ExpressionAttributeValues?.[':i_ledgerEntries']).toBe(amount === 0 ? undefined : 1);
      }),
    );
  });
});

describe('balanceCovers', () => {
  it('requires the balance to be at least the charge', () => {
    expect(balanceCovers(12)).toEqual({ expression: 'smbCredits >= :c_required', values: { ':c_required': 12 } });
  });
});

describe('reconcileCredits / totalDrift', () => {
  /** An in-memory audit port over `audits`; `registry` is what organizationIds returns. */
  const ledgerOf = (audits: LedgerAudit[], registry = audits.map((a) => a.organizationId)) => {
    const audited: string[] = [];
    return {
      audited,
      ledger: {
        organizationIds: async () => [...registry],
        audit: async (organizationId: string) => {
          audited.push(organizationId);
          return audits.find((a) => a.organizationId === organizationId);
        },
      },
    };
  };
  const audit = (
    organizationId: string,
    balance: number,
    ledgerSum: number,
    campaignDrift: LedgerAudit['campaignDrift'] = [],
  ): LedgerAudit => ({ organizationId, balance, ledgerSum, entries: 3, campaignDrift });
  const row = (organizationId: string, balance: number, ledgerSum: number) => ({ organizationId, balance, ledgerSum, entries: 3 });

  it('reports no drift when every balance equals its ledger', async () => {
    const { ledger } = ledgerOf([audit('o1', 100, 100), audit('o2', 0, 0), audit('o3', 55, 55)]);
    const report = await reconcileCredits(ledger);
    expect(report).toEqual({ organizations: 3, drift: [], campaignDrift: [] });
    expect(totalDrift(report)).toBe(0);
  });

  it('lists each drifted organization with balance − ledgerSum, and sums absolute drift', async () => {
    const { ledger } = ledgerOf([audit('o1', 100, 90), audit('o2', 5, 5), audit('o3', 40, 47)]);
    const report = await reconcileCredits(ledger);
    expect(report).toEqual({
      organizations: 3,
      drift: [
        { ...row('o1', 100, 90), drift: 10 },
        { ...row('o3', 40, 47), drift: -7 },
      ],
      campaignDrift: [],
    });
    expect(totalDrift(report)).toBe(17);
  });

  it('names each campaign whose credits.charged differs from its ledger, and counts it in totalDrift', async () => {
    const campaign = { organizationId: 'o2', campaignId: 'camp_x', charged: 5, ledgerCharged: 3, drift: 2 };
    const report = await reconcileCredits(ledgerOf([audit('o1', 1, 1), audit('o2', 5, 5, [campaign])]).ledger);
    expect(report).toEqual({ organizations: 2, drift: [], campaignDrift: [campaign] });
    expect(totalDrift(report)).toBe(2);
  });

  it('checks only the organization asked for, and counts an unknown one as 0 organizations', async () => {
    const { ledger, audited } = ledgerOf([audit('o1', 1, 2), audit('o2', 3, 3)]);
    expect(await reconcileCredits(ledger, { organizationId: 'o2' })).toEqual({ organizations: 1, drift: [], campaignDrift: [] });
    expect(await reconcileCredits(ledger, { organizationId: 'nope' })).toEqual({ organizations: 0, drift: [], campaignDrift: [] });
    expect(audited).toEqual(['o2', 'nope']);
  });

  it('skips a registered organization whose audit finds nothing', async () => {
    const { ledger } = ledgerOf([audit('o1', 9, 9)], ['o1', 'gone']);
    expect(await reconcileCredits(ledger)).toEqual({ organizations: 1, drift: [], campaignDrift: [] });
  });

  it('for any set of audits: drift lists exactly the mismatches, and totalDrift = Σ |balance − ledgerSum|', async () => {
    const audits = fc.uniqueArray(
      fc.record({
        organizationId: fc.stringMatching(/^org_[a-z0-9]{1,5}$/),
        balance: fc.integer({ min: 0, max: 10_000 }),
        ledgerSum: fc.integer({ min: -100, max: 10_000 }),
        entries: fc.nat({ max: 50 }),
      }),
      { selector: (a) => a.organizationId, maxLength: 15 },
    );
    await fc.assert(
      fc.asyncProperty(audits, async (list) => {
        const report = await reconcileCredits(ledgerOf(list.map((a) => ({ ...a, campaignDrift: [] }))).ledger);
        const mismatched = list.filter((a) => a.balance !== a.ledgerSum);
        expect(report.organizations).toBe(list.length);
        expect(report.drift).toEqual(mismatched.map((a) => ({ ...a, drift: a.balance - a.ledgerSum })));
        expect(totalDrift(report)).toBe(mismatched.reduce((t, a) => t + Math.abs(a.balance - a.ledgerSum), 0));
      }),
    );
  });
});
