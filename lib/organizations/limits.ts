/**
 * The limits of an organization (docs/limits.md): what the deployment's
 * settings give every organization, what the operator overrides on the
 * organization item (`org:limits`), and the month's spend.
 *
 * Overrides are attributes of the organization item, absent when the
 * deployment's default applies: `limitRequests`, `limitWindowSeconds`,
 * `limitExportsPerHour`, `limitUploadsPerHour`, and the optional
 * `monthlySpendLimit` and `lowBalanceThreshold` (credits; absent: none).
 * The month's spend is one item per organization and UTC calendar month
 * (`keys.monthlySpend`), added to by the launch transaction and taken from
 * by refunds (lib/enrichment/store.ts).
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as keys from '../db/keys';
import { updateIf } from '../db/conditional';
import { NotFoundError } from '../errors';
import { and, type Clause } from '../db/expression';
import type { TransactItem } from '../credits/ledger';
import type { RatePolicy } from '../http/rate-limit';
import type { KeyCheck } from '../http/auth';
import type { OrganizationLimits } from './docs';
import { LIMIT_MINIMUMS } from './limit-minimums';

/** The deployment's limits (lib/config.ts; docs/limits.md). */
export interface LimitDefaults {
  /** Authenticated requests per window. */
  requests: number;
  /** The request window (seconds). */
  windowSeconds: number;
  exportsPerHour: number;
  uploadsPerHour: number;
}

/** The limits of one organization in force: its overrides over the deployment's defaults. Spend and threshold in credits; `null`: none. */
export interface LimitsInForce {
  requests: RatePolicy;
  exportsPerHour: number;
  uploadsPerHour: number;
  monthlySpendLimit: number | null;
  lowBalanceThreshold: number | null;
}

/** What the operator changes (`org:limits`): a number sets the override, `null` removes it (the default, or none, applies again). */
export interface LimitsChange {
  requests?: number | null;
  windowSeconds?: number | null;
  exportsPerHour?: number | null;
  uploadsPerHour?: number | null;
  monthlySpendLimit?: number | null;
  lowBalanceThreshold?: number | null;
}

/** The organization item's attribute of each override. */
const ATTRIBUTES = {
  requests: 'limitRequests',
  windowSeconds: 'limitWindowSeconds',
  exportsPerHour: 'limitExportsPerHour',
  uploadsPerHour: 'limitUploadsPerHour',
  monthlySpendLimit: 'monthlySpendLimit',
  lowBalanceThreshold: 'lowBalanceThreshold',
} as const satisfies Record<keyof LimitsChange, string>;

export { LIMIT_MINIMUMS } from './limit-minimums';

/** The overrides an organization item holds (absent: the default, or none, applies). */
export type LimitOverrides = { [K in keyof LimitsChange]?: number };

/** The overrides stored on an organization item (or its projection of {@link LIMIT_ATTRIBUTES}). */
export function limitOverridesOf(item: Record<string, unknown> | undefined): LimitOverrides {
  const overrides: LimitOverrides = {};
  for (const [field, attribute] of Object.entries(ATTRIBUTES) as [keyof LimitsChange, string][]) {
    const value = item?.[attribute];
    if (typeof value === 'number') overrides[field] = value;
  }
  return overrides;
}

/** The limits in force: an organization's overrides over the deployment's defaults. */
export function limitsOf(overrides: LimitOverrides, defaults: LimitDefaults): LimitsInForce {
  return {
    requests: { limit: overrides.requests ?? defaults.requests, windowSeconds: overrides.windowSeconds ?? defaults.windowSeconds },
    exportsPerHour: overrides.exportsPerHour ?? defaults.exportsPerHour,
    uploadsPerHour: overrides.uploadsPerHour ?? defaults.uploadsPerHour,
    monthlySpendLimit: overrides.monthlySpendLimit ?? null,
    lowBalanceThreshold: overrides.lowBalanceThreshold ?? null,
  };
}

/** The organization item's limit attributes (a projection reads only these). */
export const LIMIT_ATTRIBUTES: readonly string[] = Object.values(ATTRIBUTES);

/** The UTC calendar month of a time, `YYYY-MM` (the spend limit's period). */
export const monthOf = (at: Date | string): string => (typeof at === 'string' ? at : at.toISOString()).slice(0, 7);

/** When the month of `at` ends: the first instant of the next UTC month (ISO 8601). */
export function monthEnd(at: Date): string {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString();
}

/** Data access for the limits. */
export interface LimitStore {
  /**
   * The limits in force for an organization: one GetItem of its limit
   * attributes (strongly consistent). Unknown organization: the defaults.
   */
  limits(organizationId: string): Promise<LimitsInForce>;
  /**
   * Credits the organization spent in the UTC month `month` (`YYYY-MM`), net of refunds (one GetItem; 0 when none);
   * with `keyId`, the credits charged with that API key (docs/authentication.md#per-key-credit-limits).
   */
  spent(organizationId: string, month: string, keyId?: string): Promise<number>;
  /**
   * Sets or removes overrides (operator, `org:limits`): a whole number of at
   * least {@link LIMIT_MINIMUMS} is SET, `null` REMOVEs the attribute (never
   * stored as `""` or any other non-number: docs/limits.md, "Removing a limit").
   * @returns the limits in force after the change.
   * @throws NotFoundError for an unknown organization.
   * @throws RangeError naming the field when a value is neither `null` nor such a number; nothing is written.
   */
  setLimits(organizationId: string, change: LimitsChange, alsoPut?: readonly TransactItem[]): Promise<LimitsInForce>;
}

/**
 * {@link LimitStore.limits} on its own: what the request limiter and the hourly quotas read, so their bundles carry
 * neither `setLimits` nor `spent` (docs/deploy.md "Prerequisites").
 * @param defaults - the deployment's defaults for an organization (a test twin's request limit is its own: docs/test-mode.md).
 */
export const readLimits =
  ({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }, defaults: (organizationId: string) => LimitDefaults) =>
  async (organizationId: string): Promise<LimitsInForce> => {
    const names = Object.fromEntries(LIMIT_ATTRIBUTES.map((name, i) => [`#l${i}`, name]));
    const { Item } = await client.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.organization(organizationId),
        ConsistentRead: true,
        ProjectionExpression: Object.keys(names).join(', '),
        ExpressionAttributeNames: names,
      }),
    );
    return limitsOf(limitOverridesOf(Item), defaults(organizationId));
  };

/** Builds the DynamoDB implementation of {@link LimitStore}. */
export function createLimitStore({
  client,
  tableName,
  defaults,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** The deployment's defaults for an organization (a test twin's request limit is its own: docs/test-mode.md). */
  defaults: (organizationId: string) => LimitDefaults;
}): LimitStore {
  return {
    limits: readLimits({ client, tableName }, defaults),

    async spent(organizationId, month, keyId) {
      const { Item } = await client.send(
        new GetCommand({
          TableName: tableName,
          Key: spendKey({ organizationId, month, ...(keyId !== undefined ? { keyId } : {}) }),
          ConsistentRead: true,
        }),
      );
      return Number(Item?.spent ?? 0);
    },

    async setLimits(organizationId, change, alsoPut = []) {
      const set: string[] = [];
      const remove: string[] = [];
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      for (const [field, attribute] of Object.entries(ATTRIBUTES) as [keyof LimitsChange, string][]) {
        const value = change[field];
        if (value === undefined) continue;
        if (value !== null && !(Number.isSafeInteger(value) && value >= LIMIT_MINIMUMS[field]))
          throw new RangeError(
            `${field}: a whole number of at least ${LIMIT_MINIMUMS[field]}, or null to remove it (got ${JSON.stringify(value)}); nothing was changed.`,
          );
        names[`#${field}`] = attribute;
        if (value === null) remove.push(`#${field}`);
        else {
          set.push(`#${field} = :${field}`);
          values[`:${field}`] = value;
        }
      }
      if (set.length === 0 && remove.length === 0) return this.limits(organizationId);
      const outcome = await updateIf(
        client,
        {
          TableName: tableName,
          Key: keys.organization(organizationId),
          UpdateExpression: [set.length > 0 ? `SET ${set.join(', ')}` : '', remove.length > 0 ? `REMOVE ${remove.join(', ')}` : '']
            .join(' ')
            .trim(),
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        },
        alsoPut,
      );
      // Refused (no organization item), or written and then deleted before the read-back (updateIf): gone either way.
      if (!outcome.ok || !outcome.item) throw new NotFoundError('organization', organizationId);
      return limitsOf(limitOverridesOf(outcome.item), defaults(organizationId));
    },
  };
}

/**
 * `POST /v1/org/limits` (docs/limits.md): the organization's limits in force and this month's spend.
 * Two GetItems in one wave (the limits with the key's verification on the organization item, and the month's spend).
 * @throws NotFoundError when the organization item is missing.
 */
export async function describeLimits(
  deps: {
    limits: LimitStore;
    organizations: { get(organizationId: string, keyCheck?: KeyCheck): Promise<{ limits?: LimitOverrides } | undefined> };
    defaults: (organizationId: string) => LimitDefaults;
  },
  organizationId: string,
  { now = new Date(), keyCheck }: { now?: Date; keyCheck?: KeyCheck } = {},
): Promise<OrganizationLimits> {
  const [organization, spent] = await Promise.all([
    deps.organizations.get(organizationId, keyCheck),
    deps.limits.spent(organizationId, monthOf(now)),
  ]);
  if (!organization) throw new NotFoundError('organization', organizationId);
  const limits = limitsOf(organization.limits ?? {}, deps.defaults(organizationId));
  return {
    requests: { limit: limits.requests.limit, windowSeconds: limits.requests.windowSeconds },
    exportsPerHour: limits.exportsPerHour,
    uploadsPerHour: limits.uploadsPerHour,
    monthlySpend: { limit: limits.monthlySpendLimit, spent, resetsAt: monthEnd(now) },
    lowBalanceThreshold: limits.lowBalanceThreshold,
  };
}

/** How long a month's spend item is kept after its month (seconds; TTL): refunds of a late attempt still find it. */
const SPEND_RETENTION_SECONDS = 400 * 86_400;

/**
 * A month's spend counter: the organization's (docs/limits.md), or with
 * `keyId` one API key's (docs/authentication.md#per-key-credit-limits).
 * `month`: `YYYY-MM`, the UTC month of the charge.
 */
export interface SpendCounter {
  organizationId: string;
  month: string;
  keyId?: string;
}

/** The item of a spend counter. */
const spendKey = ({ organizationId, month, keyId }: SpendCounter) =>
  keyId === undefined ? keys.monthlySpend(organizationId, month) : keys.keyMonthlySpend(organizationId, keyId, month);

/**
 * The transaction item that adds `amount` credits (negative: a refund) to
 * a month's spend `counter` (the organization's or one key's).
 * With `limit`, a charge is refused unless the month's spend stays within it
 * (the condition `spent <= limit − amount`, so racing launches never pass it
 * together); a refund is never refused.
 */
export function spendItem(tableName: string, counter: SpendCounter, amount: number, limit: number | null = null): TransactItem {
  const guarded = limit !== null && amount > 0;
  const [year, monthNumber] = counter.month.split('-').map(Number) as [number, number];
  return {
    Update: {
      TableName: tableName,
      Key: spendKey(counter),
      UpdateExpression: 'ADD #spent :amount SET #ttl = :ttl',
      ...(guarded ? { ConditionExpression: 'attribute_not_exists(#spent) OR #spent <= :maxBefore' } : {}),
      ExpressionAttributeNames: { '#spent': 'spent', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':amount': amount,
        ':ttl': Math.floor(Date.UTC(year, monthNumber, 1) / 1000) + SPEND_RETENTION_SECONDS,
        ...(guarded ? { ':maxBefore': limit - amount } : {}),
      },
    },
  };
}

/**
 * A limit attribute holds `value` (no number when null): the organization's limits are the ones a launch decided on.
 * "No limit" is what {@link limitOverridesOf} reads as none: the attribute absent, or (written by an older operator CLI)
 * holding a non-number such as `""`. Pinning it as `attribute_not_exists` alone made every launch of such an
 * organization fail its condition forever.
 */
const pinned = (attribute: string, value: number | null, placeholder: string): Clause =>
  value === null
    ? {
        expression: `NOT attribute_type(#${attribute}, :c_numberType)`,
        names: { [`#${attribute}`]: attribute },
        values: { ':c_numberType': 'N' },
      }
    : { expression: `#${attribute} = ${placeholder}`, names: { [`#${attribute}`]: attribute }, values: { [placeholder]: value } };

/**
 * What a charge of `charged` credits decided on the organization's limits
 * (docs/limits.md): the condition its organization update carries (the
 * spend limit and low-balance threshold unchanged, and the balance on the
 * side of the threshold the decision saw), and whether it takes the smb
 * balance from at or above the threshold to below it (`crossesLowBalance`:
 * the charge emits `organization.credits_low`).
 * @param balance - the smb balance the decision read (credits).
 */
export function chargeGuard(
  limits: Pick<LimitsInForce, 'monthlySpendLimit' | 'lowBalanceThreshold'>,
  balance: number,
  charged: number,
): { condition: Clause; crossesLowBalance: boolean } {
  const threshold = limits.lowBalanceThreshold;
  const crossesLowBalance = threshold !== null && balance >= threshold && balance - charged < threshold;
  const clauses = [
    pinned('monthlySpendLimit', limits.monthlySpendLimit, ':c_spendLimit'),
    pinned('lowBalanceThreshold', threshold, ':c_lowBalance'),
  ];
  if (threshold !== null && charged > 0) {
    // Crossing: threshold ≤ balance < threshold + charged; otherwise outside that range.
    const range = { values: { ':c_lowFrom': threshold, ':c_lowTo': threshold + charged } };
    clauses.push(
      crossesLowBalance
        ? { expression: 'smbCredits >= :c_lowFrom AND smbCredits < :c_lowTo', ...range }
        : { expression: 'smbCredits < :c_lowFrom OR smbCredits >= :c_lowTo', ...range },
    );
  }
  return { condition: and(...clauses), crossesLowBalance };
}
