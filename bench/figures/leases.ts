/**
 * Figures of the request-rate leases and usage counting (issues #40 and #43, docs/limits.md "How the rate is
 * counted", docs/authentication.md "Usage"):
 *
 * - limiter writes per request for one organization at half its limit (≤ 0.2): a limiter as one container holds
 *   it, on the run's table, its clock injected so the load is exactly half the limit spread over each window
 *   (lease writes and key-use writes counted at the table port);
 * - admitted requests per window under a flood from 4 limiter instances (four containers' limiters in this
 *   process, sharing the table, flooding at once): ≤ the limit and ≥ 95 % of it, in every window measured;
 *
 * The usage query over 92 days by key (reads in proportion to the rows) is the `keys` module's (bench/figures/keys.ts).
 */
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { round } from '../lib/stats';
import { newOrganizationId } from '../../lib/ids';
import { RequestLimiter } from '../../lib/http/rate-limit';
import { type KeyUses, type RequestDays } from '../../lib/http/request-counts';
import { keyUses, requestDays } from '../../lib/root';

/** The table's ports, counting their writes. */
function counting(): { days: RequestDays; uses: KeyUses; writes: () => number } {
  let writes = 0;
  return {
    days: {
      write: (o, w) => (writes++, requestDays().write(o, w)),
      giveBack: (o, d, w) => (writes++, requestDays().giveBack(o, d, w)),
    },
    uses: { record: (o, k, m) => (writes++, keyUses().record(o, k, m)) },
    writes: () => writes,
  };
}

export async function runLeases(results: Results, stack: BenchStack, options: { windows: number }): Promise<void> {
  const group = 'request-rate leases and usage';
  const policy = { limit: 200, windowSeconds: 10 };

  // ------------------------------------------------------- half the limit
  {
    const organizationId = newOrganizationId();
    const ports = counting();
    let now = Date.UTC(2031, 0, 1, 0, 0, 0);
    const limiter = new RequestLimiter({
      days: ports.days,
      keyUses: ports.uses,
      policyOf: async () => policy,
      defaults: () => policy,
      now: () => now,
    });
    const perWindow = policy.limit / 2;
    let requests = 0;
    let refused = 0;
    for (let w = 0; w < options.windows; w++)
      for (let i = 0; i < perWindow; i++) {
        now = Date.UTC(2031, 0, 1, 0, 0, 0) + w * policy.windowSeconds * 1000 + Math.floor((i * policy.windowSeconds * 1000) / perWindow);
        if (!(await limiter.admit(organizationId, 'key_bench')).allowed) refused++;
        requests++;
      }
    results.add({
      group,
      name: 'limiter writes per request, one organization at half its limit',
      value: round(ports.writes() / requests, 3),
      unit: 'writes per request',
      budget: { op: '<=', limit: 0.2, text: '≤ 0.2' },
      extra: {
        requests,
        windows: options.windows,
        writes: ports.writes(),
        refused,
        limit: `${policy.limit} per ${policy.windowSeconds} s`,
      },
      note: 'one limiter (one container) on the run table, its clock injected: 100 requests spread over each 10 s window; lease writes, give-backs and key-use writes (once per minute per key) all counted; each write is one UpdateItem of an item under 1 KB (1 WCU)',
    });
  }

  // ------------------------------------------------------------- flood
  {
    const organizationId = newOrganizationId();
    let now = Date.UTC(2031, 0, 2, 0, 0, 3);
    const limiters = Array.from(
      { length: 4 },
      () => new RequestLimiter({ days: requestDays(), policyOf: async () => policy, defaults: () => policy, now: () => now }),
    );
    const admittedPerWindow: number[] = [];
    for (let w = 0; w < options.windows; w++) {
      let admitted = 0;
      await Promise.all(
        limiters.map(async (limiter, process) => {
          // Each instance floods with 16 requests in flight until it is refused.
          await Promise.all(
            Array.from({ length: 16 }, async () => {
              for (;;) {
                const answer = await (limiter.knownRefusal(organizationId, `key_${process}`) ??
                  limiter.admit(organizationId, `key_${process}`));
                if (!answer.allowed) return;
                admitted++;
              }
            }),
          );
        }),
      );
      admittedPerWindow.push(admitted);
      now += policy.windowSeconds * 1000;
    }
    const worst = Math.min(...admittedPerWindow);
    const most = Math.max(...admittedPerWindow);
    results.add({
      group,
      name: 'admitted per window under a flood from 4 instances',
      value: round(worst / policy.limit, 3),
      unit: '× the limit (fewest in a window)',
      budget: { op: '>=', limit: 0.95, text: '≥ 0.95 and never over 1' },
      extra: {
        'admitted per window': admittedPerWindow.join(', '),
        'most in a window': most,
        limit: policy.limit,
        over: most > policy.limit ? 'OVER THE LIMIT' : 'never',
      },
      note: 'four limiters (four containers) in this process on the run table, each with 16 requests in flight until refused, one window after the other',
    });
    if (most > policy.limit) throw new Error(`the flood admitted ${most} requests in a window of limit ${policy.limit}`);
  }
  // The usage query over 92 days by key (reads ∝ rows) is the `keys` module's (bench/figures/keys.ts).
}
