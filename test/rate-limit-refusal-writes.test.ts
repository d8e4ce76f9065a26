/**
 * What refused requests write (docs/limits.md "How the rate is counted"): a process that knows an organization is
 * refused for the rest of its window answers further requests without a read, and writes their counts (the request
 * day item's per-key count and the usage months) only once it has counted `refusalsPerWrite(limit)` of them: a
 * lease's worth, at least 100. Before, an organization whose limit is under 40 (a lease's worth rounds to 1) had two
 * UpdateItems written on every refused request. The writes are counted at the table ports; once flushed, the counts
 * hold every request sent, refusals included.
 */
import { describe, expect, it } from 'vitest';
import { newOrganizationId } from '../lib/ids';
import { REFUSALS_PER_WRITE, RequestLimiter, refusalsPerWrite } from '../lib/http/rate-limit';
import { utcDay, type RequestDays, type UsageMonths } from '../lib/http/request-counts';
import { requestDays, usageMonths, usageDependencies } from '../lib/root';
import { orgUsage } from '../lib/organizations/usage';

/** The table ports with every write counted. */
function counted() {
  const days = requestDays();
  const months = usageMonths();
  const writes = { days: 0, months: 0 };
  const countingDays: RequestDays = {
    write: (organizationId, write) => {
      writes.days++;
      return days.write(organizationId, write);
    },
    giveBack: (organizationId, day, window) => days.giveBack(organizationId, day, window),
  };
  const countingMonths: UsageMonths = {
    add: (organizationId, counts) => {
      writes.months += new Set(counts.map((c) => `${c.kind} ${c.id} ${c.day.slice(0, 7)}`)).size;
      return months.add(organizationId, counts);
    },
  };
  return { writes, countingDays, countingMonths };
}

describe('refused requests of a small limit', () => {
  it('cost one day write and one usage month write per 100 refusals, not two writes each; the counts stay exact', async () => {
    const organizationId = newOrganizationId();
    const now = Date.now(); // the clock stays here: inside one window of an hour
    const policy = { limit: 2, windowSeconds: 3_600 };
    const { writes, countingDays, countingMonths } = counted();
    const limiter = new RequestLimiter({
      days: countingDays,
      usage: countingMonths,
      policyOf: async () => policy,
      defaults: () => policy,
      now: () => now,
    });
    expect(refusalsPerWrite(policy.limit)).toBe(REFUSALS_PER_WRITE);

    // The window's two requests (two leases of one: the first asks one while the policy is unknown), then the
    // refusal that finds the window used up (a lease write refused).
    for (let i = 0; i < 2; i++) expect((await limiter.admit(organizationId, 'key_a')).allowed).toBe(true);
    expect((await limiter.admit(organizationId, 'key_a')).allowed).toBe(false);
    const before = { ...writes };

    // Refusals this process knows of: 250 of them.
    const refusals = 250;
    for (let i = 0; i < refusals; i++) {
      const known = limiter.knownRefusal(organizationId, 'key_a');
      expect(known).toBeDefined();
      expect(await known).toMatchObject({ allowed: false, remaining: 0 });
    }
    // Two writes of the day item (at 100 and 200 counted) and as many of the key's usage month: 2 + 2 for 250.
    const perWrite = refusalsPerWrite(policy.limit);
    expect(writes.days - before.days).toBe(Math.floor(refusals / perWrite));
    expect(writes.months - before.months).toBe(Math.floor(refusals / perWrite));

    // Nothing lost: once flushed, the key's requests of the day are every request sent.
    await limiter.flush();
    const day = utcDay(now);
    const byKey = await orgUsage(usageDependencies(), organizationId, { from: day, to: day, groupBy: 'key' });
    const byDay = await orgUsage(usageDependencies(), organizationId, { from: day, to: day, groupBy: 'day' });
    expect(byKey.rows).toMatchObject([{ keyId: 'key_a', requests: 3 + refusals }]);
    expect(byDay.rows).toMatchObject([{ day, requests: 3 + refusals }]);
  });

  it('a large limit writes refusals once per lease’s worth, as before (5 % of 4,000: 200)', () => {
    expect(refusalsPerWrite(4_000)).toBe(200);
    expect(refusalsPerWrite(39)).toBe(REFUSALS_PER_WRITE);
  });
});
