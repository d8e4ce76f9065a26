/**
 * The request-rate leases under concurrency (docs/limits.md "How the rate is counted"; issue #43): several
 * in-process limiters play several Lambda containers on one DynamoDB Local table; fast-check chooses the arrival
 * order of the requests over the processes and, with its scheduler, the order in which the table's answers come
 * back. In every run: the window never admits more than its limit (all processes together), a flood admits at
 * least 95 % of it, and every refusal carries the seconds to the window's end as its Retry-After. The same writes
 * carry the requests per key and day: once flushed, the day item holds exactly what was sent.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { newOrganizationId } from '../lib/ids';
import { RequestLimiter, windowAt, type RequestAdmission } from '../lib/http/rate-limit';
import { requestsPerKey, utcDay, windowAttribute, type RequestDays } from '../lib/http/request-counts';
import { requestDays } from '../lib/root';

/** The table's request days with every answer delivered when fast-check's scheduler says. */
const scheduledDays = (s: fc.Scheduler, days: RequestDays): RequestDays => ({
  write: (organizationId, write) => s.schedule(days.write(organizationId, write), 'lease write'),
  giveBack: (organizationId, day, window) => s.schedule(days.giveBack(organizationId, day, window), 'give back'),
});

/** Reads an organization's request day item (strongly consistent). */
async function dayItem(organizationId: string, day: string): Promise<Record<string, unknown>> {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: config.tableName, Key: keys.requestDay(organizationId, day), ConsistentRead: true }),
  );
  return Item ?? {};
}

const PROCESSES = 4;

describe('leases of one window over several processes (fast-check: arrival orders and answer orders)', () => {
  it('never admits over the limit, admits ≥ 95 % of it under a flood, and every refusal names the seconds left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 20, max: 120 }),
        fc.array(fc.nat(PROCESSES - 1), { minLength: 10, maxLength: 80 }),
        fc.integer({ min: 0, max: 9_999 }),
        async (s, limit, arrivals, offset) => {
          const organizationId = newOrganizationId();
          const windowSeconds = 10;
          const now = Date.UTC(2031, 0, 1, 0, 0, 0) + offset; // inside one window of 10 s
          const policy = { limit, windowSeconds };
          const limiters = Array.from(
            { length: PROCESSES },
            () =>
              new RequestLimiter({
                days: scheduledDays(s, requestDays()),
                policyOf: async () => policy,
                defaults: () => policy,
                now: () => now,
              }),
          );
          const answers: RequestAdmission[] = [];
          const sent = new Map<string, number>();
          const send = async (process: number) => {
            sent.set(`key_${process}`, (sent.get(`key_${process}`) ?? 0) + 1);
            const known = limiters[process]!.knownRefusal(organizationId, `key_${process}`);
            answers.push(await (known ?? limiters[process]!.admit(organizationId, `key_${process}`)));
          };
          // The arrivals fast-check chose, all at once; the scheduler delivers the table's answers in its order.
          const first = Promise.all(arrivals.map(send));
          await s.waitFor(first);
          // Then a flood: every process keeps sending until it is refused.
          const flood = Promise.all(
            limiters.map(async (_, process) => {
              for (;;) {
                await send(process);
                if (!answers.at(-1)!.allowed) return;
              }
            }),
          );
          await s.waitFor(flood);

          const admitted = answers.filter((a) => a.allowed).length;
          expect(admitted).toBeLessThanOrEqual(limit);
          expect(admitted).toBeGreaterThanOrEqual(Math.ceil(0.95 * limit));
          const { resetSeconds } = windowAt(now, windowSeconds);
          for (const refusal of answers.filter((a) => !a.allowed))
            expect(refusal).toEqual({ limit, windowSeconds, remaining: 0, resetSeconds, allowed: false });

          // Usage: once every process flushed, the day holds each key's requests, refusals included.
          await s.waitFor(Promise.all(limiters.map((limiter) => limiter.flush())));
          expect(requestsPerKey(await dayItem(organizationId, utcDay(now)))).toEqual(sent);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('a process new to an organization whose limit is above the default is admitted, however much of it others took', async () => {
    const organizationId = newOrganizationId();
    const now = Date.UTC(2031, 0, 3, 0, 0, 1);
    const defaults = { limit: 20, windowSeconds: 10 };
    const policy = { limit: 1_000, windowSeconds: 10 };
    const limiterOf = () =>
      new RequestLimiter({ days: requestDays(), policyOf: async () => policy, defaults: () => defaults, now: () => now });
    const first = limiterOf();
    let admitted = 0;
    for (let i = 0; i < 100; i++) if ((await first.admit(organizationId, 'key_a')).allowed) admitted++;
    expect(admitted).toBe(100); // the window's count is now far above the default limit of 20
    const second = limiterOf();
    const answer = await second.admit(organizationId, 'key_b');
    expect(answer).toMatchObject({ allowed: true, limit: 1_000 });
  });

  it('a new window starts from zero and the day item drops windows that ended; it stays far below 1 KB', async () => {
    const organizationId = newOrganizationId();
    let now = Date.UTC(2031, 0, 2, 0, 0, 0);
    const policy = { limit: 40, windowSeconds: 10 };
    const limiters = [0, 1].map(
      () => new RequestLimiter({ days: requestDays(), policyOf: async () => policy, defaults: () => policy, now: () => now }),
    );
    for (let window = 0; window < 6; window++) {
      let admitted = 0;
      for (let i = 0; i < 60; i++) if ((await limiters[i % 2]!.admit(organizationId, `key_${i % 3}`)).allowed) admitted++;
      expect(admitted).toBe(40);
      now += 10_000;
    }
    const item = await dayItem(organizationId, utcDay(now));
    const windows = Object.keys(item).filter((name) => name.startsWith('w:'));
    expect(windows.length).toBeLessThanOrEqual(3);
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(1024);
  });
});

describe('a lease write in flight across the end of a window', () => {
  it('admits the requests that waited for it in the new window and never brings back the ended window’s lease', async () => {
    const organizationId = newOrganizationId();
    const policy = { limit: 40, windowSeconds: 10 };
    const first = Date.UTC(2031, 0, 1, 0, 0, 9, 500); // half a second before the first window ends
    let clock = first;
    const real = requestDays();
    let hold = false;
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const days: RequestDays = {
      write: async (org, write) => {
        if (hold && write.lease) {
          hold = false;
          await gate;
        }
        return real.write(org, write);
      },
      giveBack: (org, day, window) => real.giveBack(org, day, window),
    };
    const limiter = new RequestLimiter({ days, policyOf: async () => policy, defaults: () => policy, now: () => clock });
    expect((await limiter.admit(organizationId, 'key_a')).allowed).toBe(true); // the policy is known from here on

    hold = true;
    const late = Array.from({ length: 5 }, () => limiter.admit(organizationId, 'key_a')); // arrive in the first window
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first of them holds its lease write
    clock = first + 1_500; // the next window has begun
    const next = Array.from({ length: 30 }, () => limiter.admit(organizationId, 'key_a'));
    release();
    const answers = await Promise.all([...late, ...next]);

    expect(answers.every((answer) => answer.allowed)).toBe(true);
    // The second window's count holds what it admitted plus at most one unused lease: no lease granted in it was dropped.
    const { windowStart } = windowAt(clock, policy.windowSeconds);
    const item = await dayItem(organizationId, utcDay(clock));
    const counted = Number(item[windowAttribute(policy.windowSeconds, windowStart)] ?? 0);
    const admittedThere = 30 + 5;
    expect(counted).toBeGreaterThanOrEqual(30);
    expect(counted).toBeLessThanOrEqual(admittedThere + Math.floor(policy.limit * 0.05));
  });
});
