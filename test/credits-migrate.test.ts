/**
 * The ledger migration (lib/migrations/ledger.ts): a table written before every
 * movement was on the ledger — charges stored positive, no entry IDs,
 * organizations whose grants and adjustments left no entry — is brought to
 * balance = Σ entries, once.
 */
import { randomBytes } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, dynamodb } from '../lib/aws';
import { migrateLedger, OPENING_NOTE } from '../lib/migrations/ledger';
import { reconcileCredits } from '../lib/credits/reconcile';
import { createLedgerStore } from '../lib/credits/store';
import { ensureTable } from '../infra/local/table';

describe('migrateLedger', () => {
  it('rewrites first-ledger entries as signed changes, opens each organization with its unrecorded balance, and is idempotent', async () => {
    const tableName = `migrate-${randomBytes(4).toString('hex')}`;
    await ensureTable(dynamodb, tableName);
    const org = 'org_LegacyLegacyLegacyLeg';
    const campaign = 'camp_LegacyLegacyLegacyLeg';
    const at = '2026-10-01T10:00:00.000Z';
    // As the first ledger wrote them: organization without registry keys; charge +10, refund −4 (no contacts found).
    const legacy = [
      {
        pk: `ORG#${org}`,
        sk: 'ORG',
        type: 'organization',
        id: org,
        name: 'Legacy',
        smbCredits: 994,
        researchAgentCredits: 0,
        maxEnrichingAccounts: 100,
        enrichingAccounts: 0,
        externalEnrichingAccounts: 0,
        createdAt: '2026-09-01T00:00:00.000Z',
      },
      // Its campaign, charged 10 − 4 net (the reconciliation compares it with its entries).
      { pk: `ORG#${org}`, sk: `CAMPAIGN#${campaign}`, type: 'campaign', id: campaign, organizationId: org, creditsCharged: 6 },
      {
        pk: `ORG#${org}`,
        sk: `LEDGER#${campaign}#att_1#charge-launch`,
        type: 'ledgerEntry',
        organizationId: org,
        campaignId: campaign,
        attemptId: 'att_1',
        kind: 'charge',
        reason: 'launch',
        amount: 10,
        createdAt: at,
      },
      {
        pk: `ORG#${org}`,
        sk: `LEDGER#${campaign}#att_1#refund-no_contacts_found`,
        type: 'ledgerEntry',
        organizationId: org,
        campaignId: campaign,
        attemptId: 'att_1',
        kind: 'refund',
        reason: 'no_contacts_found',
        amount: -4,
        createdAt: '2026-10-01T10:05:00.000Z',
      },
    ];
    await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName]: legacy.map((Item) => ({ PutRequest: { Item } })) } }));
    const ledger = createLedgerStore({ client: ddb, tableName });
    // Before: the registry does not know the organization; its two entries sum to +6 against a balance of 994.
    expect(await ledger.organizationIds()).toEqual([]);

    expect(await migrateLedger({ client: ddb, tableName })).toEqual({ entries: 2, organizations: 1, openings: 1 });

    const entries = await ledger.entriesOf(org);
    expect(entries.map((e) => [e.kind, e.reason, e.amount, e.note])).toEqual([
      // 994 − (−10 + 4) = 1,000 granted before the ledger recorded grants.
      ['adjustment', 'initial_grant', 1_000, OPENING_NOTE],
      ['charge', 'launch', -10, null],
      ['refund', 'no_contacts_found', 4, null],
    ]);
    expect(entries.every((e) => /^led_/.test(e.id))).toBe(true);
    expect(await reconcileCredits(ledger)).toEqual({ organizations: 1, drift: [], campaignDrift: [] });
    expect(await ledger.audit(org)).toEqual({ organizationId: org, balance: 994, ledgerSum: 994, entries: 3, campaignDrift: [] });
    // The campaign's entries still say what it was charged net: 10 − 4.
    expect(0 - entries.filter((e) => e.campaignId === campaign).reduce((sum, e) => sum + e.amount, 0)).toBe(6);

    expect(await migrateLedger({ client: ddb, tableName })).toEqual({ entries: 0, organizations: 0, openings: 0 });
    expect(await ledger.entriesOf(org)).toEqual(entries);
  });
});
