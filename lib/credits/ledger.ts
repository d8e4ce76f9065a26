/**
 * The credit ledger (docs/launch.md#the-credit-ledger): every movement of an organization's smb
 * balance is an immutable entry, and this module is the only code that
 * builds a balance-moving write. Each write it builds changes the balance and
 * puts the entry in the same DynamoDB transaction, so at every instant
 *
 *     organization.smbCredits = Σ entry.amount over the organization's entries
 *     campaign.creditsCharged = −Σ entry.amount over the campaign's entries
 *
 * Entries of a campaign's movements have IDs derived from (campaign, attempt,
 * kind, reason) and are put with `attribute_not_exists`: a retried step can
 * never move credits twice (Stripe's balance transactions, made idempotent).
 *
 * Entries are ordered by when they were written (issue #31): an entry's
 * `createdAt` is stamped when its transaction is sent, and the transaction
 * requires it to be later than the organization's `ledgerWrittenAt` (the
 * last entry's), which it then sets. So each organization's entries, in every
 * list index (`listSk` = `createdAt#id`), only ever grow at the top: a reader
 * paging newest first never has an entry land behind its cursor.
 * {@link transactMovement} stamps and, when another writer's clock ran ahead,
 * stamps again just after it.
 */
import { createHash } from 'node:crypto';
import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { transactWrite, type TransactItem, type TransactOutcome } from '../db/conditional';
import * as keys from '../db/keys';
import { ID_ALPHABET } from '../ids';
import { and, updateParts, type Change, type Clause } from '../db/expression';

/** Kinds of ledger entry (docs/launch.md#the-credit-ledger). */
export const LEDGER_KINDS = ['charge', 'refund', 'adjustment'] as const;
/** A kind of ledger entry. */
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** Why credits moved, per kind (docs/launch.md). */
export const LEDGER_REASONS = {
  charge: ['launch'],
  refund: ['no_contacts_found', 'failed', 'canceled'],
  adjustment: ['initial_grant', 'operator'],
} as const satisfies Record<LedgerKind, readonly string[]>;
/** Why credits moved. */
export type LedgerReason = (typeof LEDGER_REASONS)[LedgerKind][number];

/** An immutable ledger entry, as stored and as the ledger operation shows it (docs/launch.md#the-credit-ledger). */
export interface LedgerEntry {
  /** `led_` + 21 base58 characters. */
  id: string;
  organizationId: string;
  /** When the movement was written (ISO 8601 UTC). */
  createdAt: string;
  kind: LedgerKind;
  reason: LedgerReason;
  /** Change to the smb balance in credits: negative for a charge, positive for a refund or a grant. */
  amount: number;
  /** The campaign a charge or refund belongs to; null for adjustments. */
  campaignId: string | null;
  /** The enrichment attempt a charge or refund belongs to; null for adjustments. */
  attemptId: string | null;
  /** Operator's note of an adjustment; null otherwise. */
  note: string | null;
  /**
   * The API key whose request caused the movement (a launch's charge and its refunds: the launching key); absent for
   * adjustments and keys without an ID. Stored, not shown by `org/ledger` (docs/launch.md#the-credit-ledger).
   */
  keyId?: string;
}

/** A transaction item (TransactWriteItems member; owned by lib/db/conditional.ts). */
export type { TransactItem };

/** `led_` + 21 base58 characters taken from a SHA-256 digest: the same movement always has the same ID. */
function derivedEntryId(...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let id = 'led_';
  for (let i = 0; i < 21; i++) id += ID_ALPHABET[digest[i]! % ID_ALPHABET.length];
  return id;
}

/** Entries of each kind of movement. Amounts are given as positive credits and signed here. */
export const ledgerEntries = {
  /** The launch charge of an attempt: −credits. */
  charge: (at: {
    organizationId: string;
    campaignId: string;
    attemptId: string;
    credits: number;
    createdAt: string;
    keyId?: string | undefined;
  }): LedgerEntry => ({
    id: derivedEntryId(at.campaignId, at.attemptId, 'charge', 'launch'),
    organizationId: at.organizationId,
    createdAt: at.createdAt,
    kind: 'charge',
    reason: 'launch',
    amount: -at.credits,
    campaignId: at.campaignId,
    attemptId: at.attemptId,
    note: null,
    ...(at.keyId !== undefined ? { keyId: at.keyId } : {}),
  }),
  /** A refund of an attempt's credits: +credits. */
  refund: (at: {
    organizationId: string;
    campaignId: string;
    attemptId: string;
    credits: number;
    reason: (typeof LEDGER_REASONS.refund)[number];
    createdAt: string;
    keyId?: string | undefined;
  }): LedgerEntry => ({
    id: derivedEntryId(at.campaignId, at.attemptId, 'refund', at.reason),
    organizationId: at.organizationId,
    createdAt: at.createdAt,
    kind: 'refund',
    reason: at.reason,
    amount: at.credits,
    campaignId: at.campaignId,
    attemptId: at.attemptId,
    note: null,
    ...(at.keyId !== undefined ? { keyId: at.keyId } : {}),
  }),
  /** The opening balance of a new organization: +credits. */
  initialGrant: (at: { organizationId: string; credits: number; createdAt: string }): LedgerEntry => ({
    id: derivedEntryId(at.organizationId, 'initial_grant'),
    organizationId: at.organizationId,
    createdAt: at.createdAt,
    kind: 'adjustment',
    reason: 'initial_grant',
    amount: at.credits,
    campaignId: null,
    attemptId: null,
    note: null,
  }),
  /** An operator's adjustment (README.md#operator-cli `org:credits`): ±credits with an optional note. `movementId` makes it unique. */
  adjustment: (at: {
    organizationId: string;
    credits: number;
    note?: string | null;
    createdAt: string;
    movementId: string;
  }): LedgerEntry => ({
    id: derivedEntryId(at.organizationId, 'operator', at.movementId),
    organizationId: at.organizationId,
    createdAt: at.createdAt,
    kind: 'adjustment',
    reason: 'operator',
    amount: at.credits,
    campaignId: null,
    attemptId: null,
    note: at.note ?? null,
  }),
};

/** The stored item of an entry: its keys, its list-index keys and the entry. */
export function ledgerItem(entry: LedgerEntry): Record<string, unknown> {
  return {
    ...keys.ledgerEntry(entry.organizationId, entry),
    ...keys.ledgerIndexes(entry.organizationId, entry),
    type: 'ledgerEntry',
    ...entry,
  };
}

/** Maps a stored (or index-projected) item to its {@link LedgerEntry}, field by field. */
export function toLedgerEntry(item: Record<string, unknown>, organizationId = String(item.organizationId)): LedgerEntry {
  return {
    id: String(item.id),
    organizationId,
    createdAt: String(item.createdAt),
    kind: item.kind as LedgerKind,
    reason: item.reason as LedgerReason,
    amount: Number(item.amount),
    campaignId: typeof item.campaignId === 'string' ? item.campaignId : null,
    attemptId: typeof item.attemptId === 'string' ? item.attemptId : null,
    note: typeof item.note === 'string' ? item.note : null,
    ...(typeof item.keyId === 'string' ? { keyId: item.keyId } : {}),
  };
}

/** The Put of an entry, refused if the same movement was already recorded. */
export function ledgerPut(tableName: string, entry: LedgerEntry): TransactItem {
  return { Put: { TableName: tableName, Item: ledgerItem(entry), ConditionExpression: 'attribute_not_exists(pk)' } };
}

/** The organization's balance covers a charge of `credits` (docs/launch.md). */
export const balanceCovers = (credits: number): Clause => ({ expression: 'smbCredits >= :c_required', values: { ':c_required': credits } });

/** Attribute of the organization item holding its last entry's `createdAt` (the ledger's clock). */
export const LEDGER_WRITTEN_AT = 'ledgerWrittenAt';

/** The ledger's clock allows an entry stamped `createdAt`: it is later than every entry written before (or none was stamped yet). */
const ledgerClockAllows = (createdAt: string): Clause => ({
  expression: `attribute_not_exists(${LEDGER_WRITTEN_AT}) OR ${LEDGER_WRITTEN_AT} < :c_writtenAt`,
  values: { ':c_writtenAt': createdAt },
});

/**
 * One balance movement: the organization item's update (balance by
 * `entry.amount`, the entry counter, the ledger's clock, plus any
 * `alsoChange` such as the capacity it reserves or releases, under
 * `condition` and the clock's) and the entry's Put. An amount of 0 writes no
 * entry (capacity may still move). The organization's update returns the
 * item on a failed condition, so {@link transactMovement} can tell a clock
 * that ran ahead from a refusal.
 *
 * @returns the transaction items, organization first, then the entry's Put when written.
 */
export function movementItems(
  tableName: string,
  entry: LedgerEntry,
  options: { alsoChange?: Change; condition?: Clause } = {},
): TransactItem[] {
  const writesEntry = entry.amount !== 0;
  const change: Change = {
    set: { ...options.alsoChange?.set, ...(writesEntry ? { [LEDGER_WRITTEN_AT]: entry.createdAt } : {}) },
    increment: { ...options.alsoChange?.increment, ...(writesEntry ? { smbCredits: entry.amount, ledgerEntries: 1 } : {}) },
    remove: options.alsoChange?.remove,
  };
  const clauses = [...(options.condition ? [options.condition] : []), ...(writesEntry ? [ledgerClockAllows(entry.createdAt)] : [])];
  const condition = clauses.length === 0 ? undefined : clauses.length === 1 ? clauses[0] : and(...clauses);
  const organizationUpdate: TransactItem = {
    Update: {
      TableName: tableName,
      Key: keys.organization(entry.organizationId),
      ...updateParts(change, condition),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  return writesEntry ? [organizationUpdate, ledgerPut(tableName, entry)] : [organizationUpdate];
}

/** Stamps the ledger's clock takes at most before giving up (each after another writer's, so contention alone ends it). */
const MAX_CLOCK_ROUNDS = 5;

/**
 * Sends a transaction holding one balance movement ({@link movementItems}),
 * with its entry stamped at write time: `build` receives the `createdAt` to
 * give the entry (now, ISO 8601 UTC). When the organization's condition
 * failed because an entry stamped at or after it was written meanwhile (or
 * this process's clock is behind another's), it is built again stamped 1 ms
 * after that entry and sent again; any other refusal is returned as it is.
 *
 * @param organizationItem - position of the organization's update in the items `build` returns.
 * @returns the outcome of the last try and the `createdAt` it stamped.
 * @throws what {@link transactWrite} throws.
 */
export async function transactMovement(
  client: DynamoDBDocumentClient,
  build: (createdAt: string) => TransactWriteCommandInput,
  organizationItem: number,
  now: () => Date = () => new Date(),
): Promise<{ outcome: TransactOutcome; createdAt: string }> {
  let floor = 0;
  for (let round = 0; ; round++) {
    const createdAt = new Date(Math.max(now().getTime(), floor + 1)).toISOString();
    const outcome = await transactWrite(client, build(createdAt));
    const written = outcome.ok
      ? undefined
      : outcome.failed.includes(organizationItem)
        ? outcome.old[organizationItem]?.[LEDGER_WRITTEN_AT]
        : undefined;
    if (typeof written !== 'string' || written < createdAt || round + 1 >= MAX_CLOCK_ROUNDS) return { outcome, createdAt };
    floor = Date.parse(written);
  }
}

/** The campaign-side change of a charge or refund: `creditsCharged` is net of refunds, −Σ amounts. */
export const campaignCreditsChange = (entry: LedgerEntry): Change => ({
  increment: entry.amount !== 0 ? { creditsCharged: -entry.amount } : {},
});

/** Sum of entries' amounts (credits). */
export const sumOf = (entries: readonly Pick<LedgerEntry, 'amount'>[]): number => entries.reduce((total, entry) => total + entry.amount, 0);
