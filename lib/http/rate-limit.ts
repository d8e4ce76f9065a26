/**
 * Limits per organization, counted in the table (docs/limits.md).
 *
 * - the request rate ({@link RequestLimiter}): each process takes leases of
 *   several requests of an organization's window (one conditional UpdateItem
 *   of the organization's request day item, lib/http/request-counts.ts, in the
 *   same wave as the request's first read: no round trip added) and admits
 *   from them without a write; the same writes carry the requests counted per
 *   key and day (`org/usage`); the use case writes nothing before the outcome
 *   is known ({@link admittedKeyCheck}).
 * - quotas per hour on one operation (exports, uploads): one fixed-window
 *   counter item per organization, limit and window (`keys.limitCounter`),
 *   one UpdateItem `ADD` with `atMost` ({@link LimitCounter.add}), counting
 *   only what they admit.
 *
 * The pipeline imports no domain: the organization's limits come through a
 * {@link RequestPolicyLookup} the composition root wires (lib/root.ts).
 */
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import * as keys from '../db/keys';
import { RateLimitedError, type RateLimitPolicy } from '../errors';
import type { KeyCheck } from './auth';
import {
  UNNAMED_KEY,
  utcDay,
  type KeyUses,
  type RateWindow,
  type RequestDays,
  type UsageCount,
  type UsageKind,
  type UsageMonths,
} from './request-counts';

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

/** Organizations a {@link RequestLimiter} remembers at most (policies, leases, counts; a container serves few). */
export const MAX_REMEMBERED = 10_000;

/**
 * A bounded map that drops its least recently used entry when full (a read makes an entry the newest), so an
 * organization still sending requests keeps its lease and counts however many others the process has seen since.
 */
export class Remembered<T> extends Map<string, T> {
  override get(key: string): T | undefined {
    if (!super.has(key)) return undefined;
    const value = super.get(key)!;
    super.delete(key);
    super.set(key, value);
    return value;
  }

  override set(key: string, value: T): this {
    if (!this.has(key) && this.size >= MAX_REMEMBERED) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}

/** Longest a process keeps usage month counts before writing them with a lease write (ms): usage lags by at most this. */
export const USAGE_FLUSH_MS = 60_000;

/** The largest lease, as a share of the limit (docs/limits.md "How the rate is counted"). */
export const LEASE_SHARE = 0.05;

/**
 * Fewest refused requests a process counts before it writes them on their own (docs/limits.md "How the rate is
 * counted"): refusals are written once they reach a lease's worth or this many, whichever is more. Below a limit of
 * 2,000 a lease's worth is under 100 (1 below 40), and a flood of refusals would otherwise cost writes in proportion
 * to the flood (two UpdateItems per refusal below 40), slowing DynamoDB for every organization.
 */
export const REFUSALS_PER_WRITE = 100;

/** How many refused requests a process counts before it writes them (see {@link REFUSALS_PER_WRITE}). */
export const refusalsPerWrite = (limit: number): number => Math.max(REFUSALS_PER_WRITE, Math.floor(limit * LEASE_SHARE));

/**
 * How many requests a lease asks for (docs/limits.md): at most {@link LEASE_SHARE} of the limit, at most the
 * window's remaining requests split over twice the processes seen sharing it (leases shrink to 1 near the limit, so
 * what processes hold unused there is small), at least 1.
 * @param limit - requests per window.
 * @param count - the window's count as this process last saw it (0: not seen yet).
 * @param granted - requests granted to this process in the window so far.
 */
export function leaseSize(limit: number, count: number, granted: number): number {
  const remaining = Math.max(0, limit - count);
  const processes = granted > 0 ? Math.max(1, Math.ceil(Math.min(count, limit) / granted)) : 1;
  return Math.max(1, Math.min(Math.floor(limit * LEASE_SHARE), Math.floor(remaining / (2 * processes)), remaining));
}

/** The lease this process holds in one organization's window. */
interface Lease extends RateWindow {
  /** The UTC day of the window's start: the request day item holding its counter. */
  day: string;
  /** Requests this process may still admit in the window without a write. */
  tokens: number;
  /** Requests granted to this process in the window, all leases together. */
  granted: number;
  /** The window's counter after this process's last write (granted to every process). */
  count: number;
  /** A lease write found the window's limit all granted: no more writes in it (until a request is given back). */
  exhausted: boolean;
}

/** What a process keeps per organization. */
interface OrganizationState {
  lease?: Lease;
  /** The lease write in flight: requests arriving meanwhile wait for it. */
  taking?: Promise<unknown>;
  /** Requests counted and not written yet: UTC day → key ID → requests. */
  pending: Map<string, Map<string, number>>;
  /** Σ of {@link pending}. */
  pendingTotal: number;
  /** Window counters seen ended, removed by the next write. */
  ended: string[];
  /** Requests per key and per campaign counted for the usage months and not written yet: `kind id day` → requests. */
  usage: Map<string, number>;
  /** Σ |requests| of {@link usage}. */
  usageTotal: number;
  /** When the oldest count of {@link usage} was made (epoch ms). */
  usageSince: number;
  refused?: { admission: RequestAdmission; until: number };
}

/** What an admission took, for {@link RequestLimiter.giveBack}. */
interface Taken {
  organizationId: string;
  /** Key counted ({@link UNNAMED_KEY} for a key without an ID). */
  key: string;
  /** UTC day it was counted in. */
  day: string;
  /** The lease the request was admitted from; none for a refusal. */
  lease?: Lease;
}

/**
 * The request-rate limit of one process (one Lambda container), with leases (docs/limits.md "How the rate is
 * counted"). An organization's window has one counter (lib/http/request-counts.ts): requests granted to processes.
 * A process with no request left in its lease takes a new one of {@link leaseSize} requests with one conditional
 * UpdateItem (`ADD n` only while the count + n ≤ the limit), in the same wave as the request's first read, and
 * admits the next requests from it without a write; requests arriving while its lease write is in flight wait for
 * it. A refused lease shows the count: the process asks the rest below the limit, or refuses. So no window ever
 * admits more than its limit, in all processes together, whatever the interleaving.
 *
 * The same writes carry usage: every authenticated request is counted per key and UTC day (refusals included) and
 * flushed with the organization's next write; refused requests are flushed on their own once they reach
 * {@link refusalsPerWrite} (a lease's worth, at least {@link REFUSALS_PER_WRITE}). A process that dies loses what it
 * had not flushed: at most one lease's worth of admitted requests per organization, and fewer than
 * {@link refusalsPerWrite} refused ones.
 *
 * It also keeps per organization
 * - its policy (read at most every `policySeconds`, beside the request's first read; on the organization's first
 *   request the lease is of one request, checked against the policy read; an operator's change applies within
 *   `policySeconds` and one lease);
 * - that it was refused, until its window ends (or a request of that window is given back): further requests of
 *   that window are refused here without a write;
 * - each key's last minute of use it recorded: `lastUsedAt` is written at most once per minute per key
 *   ({@link KeyUses}), beside the request's first read.
 */
export class RequestLimiter {
  readonly #days: RequestDays;
  readonly #keyUses: KeyUses | undefined;
  readonly #usage: UsageMonths | undefined;
  readonly #policyOf: RequestPolicyLookup;
  readonly #defaults: () => RatePolicy;
  readonly #policySeconds: number;
  readonly #now: () => number;
  readonly #policies = new Remembered<{ policy: RatePolicy; readAt: number }>();
  readonly #states = new Remembered<OrganizationState>();
  readonly #minutes = new Remembered<number>();
  readonly #admitted = new WeakMap<RequestAdmission, Taken>();

  /**
   * @param options.days - the table's request day items.
   * @param options.keyUses - where each key's last minute of use goes; none: not recorded.
   * @param options.usage - the usage months (requests per key and per campaign); none: not counted there.
   * @param options.policyOf - the organization's policy (its override or the default).
   * @param options.defaults - the deployment's policy, used for an organization not read yet.
   * @param options.policySeconds - how long a policy read is used before it is read again (seconds, default 60).
   * @param options.now - the clock (epoch milliseconds); tests move it.
   */
  constructor(options: {
    days: RequestDays;
    keyUses?: KeyUses;
    usage?: UsageMonths;
    policyOf: RequestPolicyLookup;
    defaults: () => RatePolicy;
    policySeconds?: number;
    now?: () => number;
  }) {
    this.#days = options.days;
    this.#keyUses = options.keyUses;
    this.#usage = options.usage;
    this.#policyOf = options.policyOf;
    this.#defaults = options.defaults;
    this.#policySeconds = options.policySeconds ?? 60;
    this.#now = options.now ?? Date.now;
  }

  #stateOf(organizationId: string): OrganizationState {
    let state = this.#states.get(organizationId);
    if (!state)
      this.#states.set(
        organizationId,
        (state = { pending: new Map(), pendingTotal: 0, ended: [], usage: new Map(), usageTotal: 0, usageSince: 0 }),
      );
    return state;
  }

  /** Counts `n` requests of a key or campaign on the day for the usage months (not written yet). */
  #tally(state: OrganizationState, kind: UsageKind, id: string, day: string, n: number): void {
    if (!this.#usage) return;
    const name = `${kind} ${id} ${day}`;
    if (state.usage.size === 0) state.usageSince = this.#now();
    state.usage.set(name, (state.usage.get(name) ?? 0) + n);
    state.usageTotal += Math.abs(n);
  }

  /**
   * Writes the organization's usage month counts (one UpdateItem per key or campaign and month, in parallel) when a
   * lease's worth of requests is counted, a minute has passed since the oldest, or `force`; nothing otherwise. The
   * counts of a failed write are kept for the next one.
   * @param limit - the organization's request limit (a lease's worth is {@link LEASE_SHARE} of it).
   * @throws the table's errors.
   */
  async #flushUsage(organizationId: string, state: OrganizationState, limit: number, force = false): Promise<void> {
    if (!this.#usage || state.usage.size === 0) return;
    const due =
      force || state.usageTotal >= Math.max(1, Math.floor(limit * LEASE_SHARE)) || this.#now() - state.usageSince >= USAGE_FLUSH_MS;
    if (!due) return;
    const counts: UsageCount[] = [...state.usage].map(([name, n]) => {
      const [kind, id, day] = name.split(' ') as [UsageKind, string, string];
      return { kind, id, day, n };
    });
    state.usage = new Map();
    state.usageTotal = 0;
    const { failed, error } = await this.#usage.add(organizationId, counts);
    for (const { kind, id, day, n } of failed) this.#tally(state, kind, id, day, n);
    if (error !== undefined) throw error;
  }

  /**
   * Counts a request whose body names a campaign, for `org/usage` by campaign (docs/authentication.md "Usage"):
   * no write now; written with the organization's usage months ({@link #flushUsage}).
   */
  countCampaign(organizationId: string, campaignId: string): void {
    this.#tally(this.#stateOf(organizationId), 'C', campaignId, utcDay(this.#now()), 1);
  }

  /** Counts `n` requests of the key on the day (not written yet). */
  #count(state: OrganizationState, key: string, day: string, n: number): void {
    if (key !== UNNAMED_KEY) this.#tally(state, 'K', key, day, n);
    const perKey = state.pending.get(day) ?? new Map<string, number>();
    perKey.set(key, (perKey.get(key) ?? 0) + n);
    state.pending.set(day, perKey);
    state.pendingTotal += n;
  }

  /** Takes the day's pending counts out (to write); {@link #restore} puts them back when the write failed. */
  #takePending(state: OrganizationState, day: string): Map<string, number> {
    const counts = state.pending.get(day) ?? new Map<string, number>();
    state.pending.delete(day);
    for (const n of counts.values()) state.pendingTotal -= n;
    return counts;
  }

  #restore(state: OrganizationState, day: string, counts: ReadonlyMap<string, number>): void {
    for (const [key, n] of counts) {
      const perKey = state.pending.get(day) ?? new Map<string, number>();
      perKey.set(key, (perKey.get(key) ?? 0) + n);
      state.pending.set(day, perKey);
      state.pendingTotal += n;
    }
  }

  /** Writes the pending counts of every day but `except` (one UpdateItem each, in parallel). */
  async #flushDays(organizationId: string, state: OrganizationState, except?: string): Promise<void> {
    await Promise.all(
      [...state.pending.keys()]
        .filter((day) => day !== except)
        .map(async (day) => {
          const counts = this.#takePending(state, day);
          try {
            await this.#days.write(organizationId, { day, counts, remove: [] });
          } catch (error) {
            this.#restore(state, day, counts);
            throw error;
          }
        }),
    );
  }

  /**
   * A refusal this process already knows of: the organization was refused in the current window. The request is
   * counted (usage counts refusals); no read, and no write unless the counted requests reach
   * {@link refusalsPerWrite} (then one UpdateItem writes them, and the usage months theirs).
   * @param keyId - the request's key ID (`undefined`: a key from before key IDs).
   * @returns the refusal, once its count is written if due; `undefined` when none is known.
   */
  knownRefusal(organizationId: string, keyId?: string): Promise<RequestAdmission> | undefined {
    const state = this.#states.get(organizationId);
    const refused = state?.refused;
    if (!state || !refused) return undefined;
    const now = this.#now();
    if (now >= refused.until) {
      state.refused = undefined;
      return undefined;
    }
    this.#count(state, keyId ?? UNNAMED_KEY, utcDay(now), 1);
    const admission: RequestAdmission = {
      ...refused.admission,
      remaining: 0,
      resetSeconds: Math.max(1, Math.ceil((refused.until - now) / 1000)),
    };
    if (state.pendingTotal < refusalsPerWrite(refused.admission.limit)) return Promise.resolve(admission);
    return Promise.all([this.#flushDays(organizationId, state), this.#flushUsage(organizationId, state, refused.admission.limit)]).then(
      () => admission,
    );
  }

  /** Records the key's use in this minute, once per minute per key in this process. */
  async #recordKeyUse(organizationId: string, keyId: string | undefined, now: number): Promise<void> {
    if (!this.#keyUses || keyId === undefined) return;
    const minute = Math.floor(now / 60_000) * 60_000;
    const id = `${organizationId}/${keyId}`;
    if ((this.#minutes.get(id) ?? -1) >= minute) return;
    this.#minutes.set(id, minute);
    try {
      await this.#keyUses.record(organizationId, keyId, new Date(minute).toISOString());
    } catch (error) {
      this.#minutes.delete(id);
      throw error;
    }
  }

  /**
   * Admits one request of the organization: from this process's lease without a write, or after a new lease (one
   * UpdateItem, carrying the organization's pending request counts; with the policy's GetItem in parallel when it
   * is due, and the key's last-use write when its minute is new). Counts the request for the key. Throws nothing for
   * a refusal: the caller decides.
   * @param keyId - the request's key ID (`undefined`: a key from before key IDs).
   * @throws the table's errors.
   */
  async admit(organizationId: string, keyId?: string): Promise<RequestAdmission> {
    const known = this.knownRefusal(organizationId, keyId);
    if (known) return known;
    const now = this.#now();
    const state = this.#stateOf(organizationId);
    const key = keyId ?? UNNAMED_KEY;
    const day = utcDay(now);
    this.#count(state, key, day, 1);
    const cached = this.#policies.get(organizationId);
    const due = !cached || now - cached.readAt >= this.#policySeconds * 1000;
    const reading = due
      ? this.#policyOf(organizationId).then((policy) => {
          this.#policies.set(organizationId, { policy, readAt: now });
          return policy;
        })
      : undefined;
    reading?.catch(() => undefined); // awaited below
    const keyUse = this.#recordKeyUse(organizationId, keyId, now);
    keyUse.catch(() => undefined); // awaited below
    // Taken in the window of the policy known now; unknown: a lease of one, under the default limit, checked below.
    const assumed = cached?.policy ?? this.#defaults();
    let lease = await this.#take(organizationId, state, assumed, now, cached === undefined);
    const policy = reading ? await reading : cached!.policy;
    // The read found another window (the operator changed it), or a higher limit than the one assumed that the
    // other processes' leases already passed (an organization whose limit was raised): a lease under the policy read,
    // the only case of a second round trip (once per organization and process).
    if (policy.windowSeconds !== assumed.windowSeconds || (lease === undefined && policy.limit > assumed.limit)) {
      if (state.lease) state.lease.exhausted = false; // judged against the assumed limit
      lease = await this.#take(organizationId, state, policy, now, false);
    } else if (lease && lease.count - lease.tokens > policy.limit) lease = undefined; // a lower limit than assumed
    await keyUse;
    const { windowStart, resetSeconds } = windowAt(now, policy.windowSeconds);
    const admission: RequestAdmission = {
      limit: policy.limit,
      windowSeconds: policy.windowSeconds,
      remaining: lease ? Math.max(0, policy.limit - (lease.count - lease.tokens)) : 0,
      resetSeconds,
      allowed: lease !== undefined,
    };
    this.#admitted.set(admission, { organizationId, key, day, ...(lease ? { lease } : {}) });
    if (!lease) state.refused = { admission, until: (windowStart + policy.windowSeconds) * 1000 };
    return admission;
  }

  /**
   * Takes one request from the organization's lease in the window of `policy` at `now`, taking leases (one
   * conditional UpdateItem each) until one is granted or the window's limit is all granted (then `undefined`).
   * @param single - ask one request at a time (the policy is not known yet).
   */
  async #take(
    organizationId: string,
    state: OrganizationState,
    policy: RatePolicy,
    now: number,
    single: boolean,
  ): Promise<Lease | undefined> {
    for (let refusedWrites = 0; ;) {
      // The window of this moment, not of the request's arrival: a request that waited for a lease write across a
      // window's end is admitted in the new window, and never brings back the lease of an ended one (which would
      // drop the new window's granted requests, counted in the table but never used).
      const { windowStart } = windowAt(Math.max(now, this.#now()), policy.windowSeconds);
      let lease = state.lease;
      if (!lease || lease.windowSeconds !== policy.windowSeconds || lease.windowStart < windowStart) {
        lease = state.lease = {
          windowSeconds: policy.windowSeconds,
          windowStart,
          day: utcDay(windowStart * 1000),
          tokens: 0,
          granted: 0,
          count: 0,
          exhausted: false,
        };
      }
      if (lease.tokens > 0) {
        lease.tokens--;
        return lease;
      }
      if (state.taking) {
        await state.taking.catch(() => undefined);
        continue;
      }
      if (lease.exhausted || refusedWrites >= 3) return undefined;
      const ask = single ? 1 : Math.max(1, Math.min(leaseSize(policy.limit, lease.count, lease.granted), policy.limit - lease.count));
      const taking = this.#lease(organizationId, state, lease, ask, policy.limit);
      state.taking = taking;
      try {
        if (!(await taking)) refusedWrites++;
      } finally {
        state.taking = undefined;
      }
    }
  }

  /** One lease write (with the pending counts of its day; other days' beside it). @returns whether it was granted. */
  async #lease(organizationId: string, state: OrganizationState, lease: Lease, ask: number, limit: number): Promise<boolean> {
    const counts = this.#takePending(state, lease.day);
    const remove = state.ended.splice(0);
    try {
      const [outcome] = await Promise.all([
        this.#days.write(organizationId, { day: lease.day, lease: { window: lease, ask, atMost: limit }, counts, remove }),
        this.#flushDays(organizationId, state, lease.day),
        this.#flushUsage(organizationId, state, limit),
      ]);
      state.ended.push(...outcome.ended);
      lease.count = outcome.count;
      if (!outcome.taken) {
        this.#restore(state, lease.day, counts);
        lease.exhausted = outcome.count >= limit;
        return false;
      }
      lease.tokens += ask;
      lease.granted += ask;
      return true;
    } catch (error) {
      this.#restore(state, lease.day, counts);
      state.ended.push(...remove);
      throw error;
    }
  }

  /**
   * Gives back an admission whose request turned out not to be the organization's: its key was found revoked,
   * expired or unknown during the request (docs/limits.md, "A revoked key spends nothing"). Its request is
   * uncounted for the key, and a request admitted from a lease goes back to the window's counter in the table (one
   * UpdateItem), so every process may use it again. This process forgets a refusal of that window (its count went
   * down, or the refusal was this request's). Nothing for an admission already given back or one this process
   * did not make.
   * @throws the table's errors.
   */
  async giveBack(admission: RequestAdmission): Promise<void> {
    const taken = this.#admitted.get(admission);
    if (!taken) return;
    this.#admitted.delete(admission);
    const state = this.#stateOf(taken.organizationId);
    this.#count(state, taken.key, taken.day, -1);
    state.refused = undefined;
    if (state.lease) state.lease.exhausted = false;
    if (taken.lease) await this.#days.giveBack(taken.organizationId, taken.lease.day, taken.lease);
  }

  /**
   * Writes every organization's pending request counts now (one UpdateItem per organization and day): for tests
   * and a process about to stop; otherwise they ride on the next lease write.
   * @throws the table's errors.
   */
  async flush(): Promise<void> {
    await Promise.all(
      [...this.#states].flatMap(([organizationId, state]) => [
        this.#flushDays(organizationId, state),
        this.#flushUsage(organizationId, state, 0, true),
      ]),
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
