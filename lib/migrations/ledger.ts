/**
 * One-off migration of a table written before the ledger was complete
 * (docs/launch.md), idempotent: `npm start` runs it on its data folder and
 * operators run it with `npx ops migrate` (lib/migrations/index.ts) against a deployed
 * table.
 *
 * 1. Entries of the first ledger (key `LEDGER#<campaign>#<attempt>#<kind>-<reason>`,
 *    a charge stored as a positive amount, no ID) become entries of today's
 *    shape: the change to the balance (a charge negative), a derived ID, the
 *    list-index keys.
 * 2. Organizations without the registry keys get them, with their entry
 *    count, and — when their balance differs from the sum of their entries
 *    (grants and adjustments made before they were recorded) — one opening
 *    `adjustment`/`initial_grant` entry for the difference, noted as such, so
 *    the balance equals the sum of the ledger from then on.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanItems as scan } from '../db/query';
import * as keys from '../db/keys';
import { transactWrite } from '../db/conditional';
import { ledgerEntries, ledgerPut, sumOf, type LedgerReason } from '../credits/ledger';
import { createLedgerStore } from '../credits/store';

/** What {@link migrateLedger} changed. */
export interface LedgerMigration {
  /** First-ledger entries rewritten. */
  entries: number;
  /** Organizations added to the registry. */
  organizations: number;
  /** Opening entries written (credits moved before the ledger recorded them). */
  openings: number;
}

/** Note of an opening entry. */
export const OPENING_NOTE = 'Opening balance: credits granted or adjusted before every movement was on the ledger (migration)';

/** Runs the migration; a second run changes nothing. */
export async function migrateLedger({
  client,
  tableName,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
}): Promise<LedgerMigration> {
  const result: LedgerMigration = { entries: 0, organizations: 0, openings: 0 };

  for await (const old of scan(client, tableName, '#type = :entry AND attribute_not_exists(id)', { ':entry': 'ledgerEntry' })) {
    const organizationId = String(old.organizationId);
    const at = {
      organizationId,
      campaignId: String(old.campaignId),
      attemptId: String(old.attemptId),
      credits: Math.abs(Number(old.amount)),
      createdAt: String(old.createdAt),
    };
    const entry =
      old.kind === 'charge'
        ? ledgerEntries.charge(at)
        : ledgerEntries.refund({ ...at, reason: old.reason as Extract<LedgerReason, 'no_contacts_found' | 'failed' | 'canceled'> });
    const outcome = await transactWrite(client, {
      TransactItems: [
        { Delete: { TableName: tableName, Key: { pk: old.pk, sk: old.sk }, ConditionExpression: 'attribute_exists(pk)' } },
        ledgerPut(tableName, entry),
      ],
    });
    if (outcome.ok) result.entries++;
  }

  const ledger = createLedgerStore({ client, tableName });
  for await (const organization of scan(client, tableName, '#type = :organization AND attribute_not_exists(gsi1pk)', {
    ':organization': 'organization',
  })) {
    const organizationId = String(organization.id);
    const entries = await ledger.entriesOf(organizationId);
    const balance = Number(organization.smbCredits);
    const opening = balance - sumOf(entries);
    const entry =
      opening !== 0
        ? {
            ...ledgerEntries.initialGrant({ organizationId, credits: opening, createdAt: String(organization.createdAt) }),
            note: OPENING_NOTE,
          }
        : undefined;
    const outcome = await transactWrite(client, {
      TransactItems: [
        {
          Update: {
            TableName: tableName,
            Key: keys.organization(organizationId),
            UpdateExpression: 'SET gsi1pk = :registry, listSk = :listSk, ledgerEntries = :count',
            // Only if no balance moved since it was read (a running stack may be launching).
            ConditionExpression: 'smbCredits = :balance AND attribute_not_exists(gsi1pk)',
            ExpressionAttributeValues: {
              ':registry': keys.organizationRegistry({ id: organizationId, createdAt: String(organization.createdAt) }).gsi1pk,
              ':listSk': keys.organizationRegistry({ id: organizationId, createdAt: String(organization.createdAt) }).listSk,
              ':count': entries.length + (entry ? 1 : 0),
              ':balance': balance,
            },
          },
        },
        ...(entry ? [ledgerPut(tableName, entry)] : []),
      ],
    });
    if (!outcome.ok) throw new Error(`Organization ${organizationId} changed while it was migrated; run the migration again`);
    result.organizations++;
    if (entry) result.openings++;
  }
  return result;
}
