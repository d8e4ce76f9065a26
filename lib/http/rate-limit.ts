/**
 * Limits per organization, counted in the table (docs/limits.md).
 *
 * One fixed-window counter item per organization, limit and window
 * (`keys.limitCounter`), written with one UpdateItem `ADD` (1 WCU: the item
 * is far below 1 KB) and expiring with its window (TTL). Two uses:
 *
 * - the request rate ({@link RequestLimiter}): the pipeline counts every
 *   authenticated request in the same wave as the request's authentication
 *   read (no round trip added) and refuses it once the window's count is
 *   over the organization's limit; the use case writes nothing before the
 *   outcome is known ({@link admittedKeyCheck}). Once an organization is
 *   refused, this process refuses its further requests of that window
 *   without a write: the window's count only grows.
 * - quotas per hour on one operation (exports, uploads: {@link LimitCounter.add}
 *   with `atMost`), which count only what they admit.
 *
 * The pipeline imports no domain: the organization's limits come through a
 * {@link RequestPolicyLookup} the composition root wires (lib/root.ts).
 */
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { keys } from '../db/table';
import { RateLimitedError, type RateLimitPolicy } from '../errors';
import type { KeyCheck } from './auth';

/** One limit: at most `limit` per window of `windowSeconds` (docs/limits.md). */
export interface RatePolicy {
  limit: number;
  /** Length of the window (seconds). */
  windowSeconds: number;
}

/** The organization's request-rate policy (its override, or the deployment's default). */
export type RequestPolicyLookup = (organizationId: string) => Promise<RatePolicy>;

/** Fixed-window counters in the table. */
export interface LimitCounter {
  /**
   * Counts one use of `policy` by the organization in the window of
   * `windowSeconds` that starts at `windowStart` (epoch seconds): one
   * UpdateItem `ADD`, 1 WCU. With `atMost`, counts it only while the count
   * plus `amount` stays at most `atMost` (a condition; a refusal writes nothing).
   * @param amount - uses counted at once (default 1; the account IDs of one test create).
   * @returns the window's count after this use (`atMost` when refused), and whether it was counted.
   */
  add(
    organizationId: string,
    policy: RateLimitPolicy,
    windowSeconds: number,
    windowStart: number,
    atMost?: number,
    amount?: number,
  ): Promise<{ count: number; counted: boolean }>;
  /**
   * Takes back `amount` (default 1) counted uses of that window (a quota use whose work failed; docs/limits.md):
   * one UpdateItem `ADD -amount`, only while the count holds them (never below 0).
   */
  giveBack(organizationId: string, policy: RateLimitPolicy, windowSeconds: number, windowStart: number, amount?: number): Promise<void>;
}

/** Builds the DynamoDB implementation of {@link LimitCounter}. */
export function createLimitCounter({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): LimitCounter {
  return {
    async add(organizationId, policy, windowSeconds, windowStart, atMost, amount = 1) {
      // More than the whole window allows is refused without a write.
      if (atMost !== undefined && amount > atMost) return { count: atMost, counted: false };
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.limitCounter(organizationId, policy, windowSeconds, windowStart),
            // The item expires with its window (TTL deletes within days; nothing reads a past window).
            UpdateExpression: 'ADD #count :amount SET #ttl = :ttl',
            ...(atMost === undefined ? {} : { ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room' }),
            ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
            ExpressionAttributeValues: {
              ':amount': amount,
              ':ttl': windowStart + windowSeconds,
              ...(atMost === undefined ? {} : { ':room': atMost - amount }),
            },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
        return { count: Number(Attributes?.count ?? amount), counted: true };
      } catch (error) {
        if (atMost !== undefined && error instanceof ConditionalCheckFailedException) return { count: atMost, counted: false };
        throw error;
      }
    },

    async giveBack(organizationId, policy, windowSeconds, windowStart, amount = 1) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.limitCounter(organizationId, policy, windowSeconds, windowStart),
            UpdateExpression: 'ADD #count :minus',
            ConditionExpression: '#count >= :amount',
            ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: { ':minus': -amount, ':amount': amount },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}

/** Where a time falls in fixed windows of `windowSeconds`: the window's start (epoch seconds) and the whole seconds until it resets (≥ 1). */
export function windowAt(nowMs: number, windowSeconds: number): { windowStart: number; resetSeconds: number } {
  const nowSeconds = nowMs / 1000;
  const windowStart = Math.floor(nowSeconds / windowSeconds) * windowSeconds;
  return { windowStart, resetSeconds: Math.max(1, Math.ceil(windowStart + windowSeconds - nowSeconds)) };
}

/** One counted use of a quota (see {@link takeQuota}). */
export interface QuotaUse {
  /**
   * Gives the use back to the window it was counted in, when the work it was counted for failed
   * (docs/limits.md, "Exports and uploads per hour"). Never throws: a failure is logged by the caller's catch.
   */
  giveBack(): Promise<void>;
}

/**
 * Counts one use (or `amount` uses at once) of an hourly (or any) quota and refuses it past the limit
 * (exports and uploads, docs/limits.md; a test twin's stored account IDs per day, docs/test-mode.md).
 * @returns the use, to give back if the work fails.
 * @throws RateLimitedError (429 `rate_limited`, `policy`) when the window's `limit` is used; nothing is counted then.
 */
export async function takeQuota(
  counter: LimitCounter,
  organizationId: string,
  policy: RateLimitPolicy,
  { limit, windowSeconds }: RatePolicy,
  now = Date.now(),
  amount = 1,
): Promise<QuotaUse> {
  const { windowStart, resetSeconds } = windowAt(now, windowSeconds);
  const { counted } = await counter.add(organizationId, policy, windowSeconds, windowStart, limit, amount);
  if (!counted) throw new RateLimitedError({ policy, limit, windowSeconds, retryAfterSeconds: resetSeconds });
  return { giveBack: () => counter.giveBack(organizationId, policy, windowSeconds, windowStart, amount) };
}

/**
 * Runs `work` under a counted quota use: if the work fails, the use is given back (one write) and the work's error is
 * rethrown (docs/limits.md). A failure to give it back is reported to `onGiveBackError`, never hides the work's error.
 */
export async function withQuotaUse<T>(
  use: QuotaUse | undefined,
  work: () => Promise<T>,
  onGiveBackError: (error: unknown) => void,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await use?.giveBack().catch(onGiveBackError);
    throw error;
  }
}

/** The request-rate outcome of one request: what the RateLimit fields show. */
export interface RequestAdmission extends RatePolicy {
  /** Requests left in the window (≥ 0). */
  remaining: number;
  /** Whole seconds until the window resets (≥ 1). */
  resetSeconds: number;
  allowed: boolean;
}

/**
 * The IETF RateLimit fields of an admission (draft-ietf-httpapi-ratelimit-headers,
 * structured-field syntax; docs/limits.md), lower-case names.
 */
export function rateLimitFields(admission: RequestAdmission): Record<string, string> {
  return {
    'ratelimit-policy': `"requests";q=${admission.limit};w=${admission.windowSeconds}`,
    ratelimit: `"requests";r=${admission.remaining};t=${admission.resetSeconds}`,
  };
}

/** The 429 of a refused admission. */
export const refusalOf = (admission: RequestAdmission): RateLimitedError =>
  new RateLimitedError({
    policy: 'requests',
    limit: admission.limit,
    windowSeconds: admission.windowSeconds,
    retryAfterSeconds: admission.resetSeconds,
  });

/** Organizations a {@link RequestLimiter} remembers at most (policies and refusals; a container serves few). */
const MAX_REMEMBERED = 10_000;

/** A bounded map that drops its oldest entry when full. */
class Remembered<T> extends Map<string, T> {
  override set(key: string, value: T): this {
    if (!this.has(key) && this.size >= MAX_REMEMBERED) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}

/**
 * The request-rate limit of one process (one Lambda container): counts each
 * authenticated request in the table, and keeps per organization
 * - its policy (read at most every `policySeconds`, in the same wave as the
 *   count, which uses the window of the policy read last, or of `defaults`
 *   on the organization's first request; an operator's change applies within
 *   `policySeconds`, and a changed window is counted again in that window);
 * - that it was refused, until its window ends: further requests of that
 *   window are refused here, without a write (the count only grows).
 */
export class RequestLimiter {
  readonly #counter: LimitCounter;
  readonly #policyOf: RequestPolicyLookup;
  readonly #defaults: () => RatePolicy;
  readonly #policySeconds: number;
  readonly #now: () => number;
  readonly #policies = new Remembered<{ policy: RatePolicy; readAt: number }>();
  readonly #refused = new Remembered<{ admission: RequestAdmission; until: number }>();
  /** Where each admission this process counted was counted (for {@link giveBack}); a known refusal counted nothing. */
  readonly #counted = new WeakMap<
    RequestAdmission,
    { organizationId: string; windows: { windowSeconds: number; windowStart: number }[] }
  >();

  /**
   * @param options.counter - the table's counters.
   * @param options.policyOf - the organization's policy (its override or the default).
   * @param options.defaults - the deployment's policy, used for an organization not read yet.
   * @param options.policySeconds - how long a policy read is used before it is read again (seconds, default 60).
   * @param options.now - the clock (epoch milliseconds); tests move it.
   */
  constructor(options: {
    counter: LimitCounter;
    policyOf: RequestPolicyLookup;
    defaults: () => RatePolicy;
    policySeconds?: number;
    now?: () => number;
  }) {
    this.#counter = options.counter;
    this.#policyOf = options.policyOf;
    this.#defaults = options.defaults;
    this.#policySeconds = options.policySeconds ?? 60;
    this.#now = options.now ?? Date.now;
  }

  /**
   * A refusal this process already knows of: the organization was refused in
   * the current window. No read, no write.
   */
  knownRefusal(organizationId: string): RequestAdmission | undefined {
    const refused = this.#refused.get(organizationId);
    if (!refused) return undefined;
    const now = this.#now();
    if (now >= refused.until) {
      this.#refused.delete(organizationId);
      return undefined;
    }
    return { ...refused.admission, remaining: 0, resetSeconds: Math.max(1, Math.ceil((refused.until - now) / 1000)) };
  }

  /**
   * Counts one request of the organization (one UpdateItem; with the
   * policy's GetItem in parallel when it is due) and tells whether it is
   * within the limit. Throws nothing for a refusal: the caller decides.
   * @throws the table's errors.
   */
  async admit(organizationId: string): Promise<RequestAdmission> {
    const known = this.knownRefusal(organizationId);
    if (known) return known;
    const now = this.#now();
    const cached = this.#policies.get(organizationId);
    const due = !cached || now - cached.readAt >= this.#policySeconds * 1000;
    const reading = due
      ? this.#policyOf(organizationId).then((policy) => {
          this.#policies.set(organizationId, { policy, readAt: now });
          return policy;
        })
      : undefined;
    reading?.catch(() => undefined); // awaited below
    // Counted in the window of the policy known now, beside the policy's read.
    const assumed = (cached?.policy ?? this.#defaults()).windowSeconds;
    const [first, policy] = await Promise.all([
      this.#counter.add(organizationId, 'requests', assumed, windowAt(now, assumed).windowStart),
      reading ?? cached!.policy,
    ]);
    let { count } = first;
    const windows = [{ windowSeconds: assumed, windowStart: windowAt(now, assumed).windowStart }];
    // The read found another window (the operator changed it): counted again in that one, the only case
    // of a second round trip (once per organization and process; the first count is in a window no one reads).
    const { windowSeconds } = policy;
    const { windowStart, resetSeconds } = windowAt(now, windowSeconds);
    if (windowSeconds !== assumed) {
      ({ count } = await this.#counter.add(organizationId, 'requests', windowSeconds, windowStart));
      windows.push({ windowSeconds, windowStart });
    }
    const admission: RequestAdmission = {
      limit: policy.limit,
      windowSeconds,
      remaining: Math.max(0, policy.limit - count),
      resetSeconds,
      allowed: count <= policy.limit,
    };
    this.#counted.set(admission, { organizationId, windows });
    if (!admission.allowed) this.#refused.set(organizationId, { admission, until: (windowStart + windowSeconds) * 1000 });
    return admission;
  }

  /**
   * Gives back the count of an admission whose request turned out not to be
   * the organization's to spend: its key was found revoked, expired or unknown
   * during the request (docs/limits.md, "A revoked key spends nothing"). One
   * UpdateItem per window it was counted in; nothing for an admission this
   * process did not count (a known refusal) or gave back already. A refusal
   * this admission caused is forgotten here (the window's count went down).
   * @throws the table's errors.
   */
  async giveBack(admission: RequestAdmission): Promise<void> {
    const counted = this.#counted.get(admission);
    if (!counted) return;
    this.#counted.delete(admission);
    const { organizationId, windows } = counted;
    if (this.#refused.get(organizationId)?.admission === admission) this.#refused.delete(organizationId);
    await Promise.all(
      windows.map(({ windowSeconds, windowStart }) => this.#counter.giveBack(organizationId, 'requests', windowSeconds, windowStart)),
    );
  }
}

/**
 * The request's key check, gated on its admission: verified only once the
 * key is and the request is within the limit, so a use case that verifies
 * its key before writing (lib/http/pipeline.ts `in-read`) writes nothing for
 * a refused request, and the pipeline answers nothing else.
 * {@link KeyCheck.ensure} rejects with the key's refusal first (401), then
 * the limit's (429 `rate_limited`).
 */
export function admittedKeyCheck(check: KeyCheck, admission: Promise<RequestAdmission>): KeyCheck {
  let admitted = false;
  const gate = admission.then((outcome) => {
    if (!outcome.allowed) throw refusalOf(outcome);
    admitted = true;
  });
  gate.catch(() => undefined); // awaited by ensure()
  return {
    keyHash: check.keyHash,
    organizationId: check.organizationId,
    scopes: check.scopes,
    keyId: check.keyId,
    limits: check.limits,
    get verified() {
      return admitted && check.verified;
    },
    confirmListed: (listed) => check.confirmListed(listed),
    ensure: async () => {
      await check.ensure();
      await gate;
    },
  };
}
