/**
 * The test twin's use is bounded (docs/test-mode.md, "Limits of test mode";
 * third audit, R5), through HTTP against the local API and DynamoDB Local:
 * - its request window is its own and smaller (`TEST_RATE_LIMIT_REQUESTS`):
 *   flooding it admits exactly that many requests, and neither its live
 *   organization nor another tenant loses one request of their own windows;
 * - the account IDs its creates store are counted per UTC day
 *   (`TEST_ACCOUNT_IDS_PER_DAY`): past it a create answers 429 `rate_limited`
 *   (`policy: "testAccountIds"`) and stores nothing; live creates are not counted.
 * Counts only: the twin's window is set to an hour so no window ends mid-test.
 */
import { describe, expect, it } from 'vitest';
import { config } from '../lib/config';
import { windowAt } from '../lib/http/rate-limit';
import { apiKeys, campaigns, limitCounter, limits, organizations } from '../lib/root';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import { DESCRIBE } from './enrichment/support';

const api = useApi();

const REMAINING = /^"requests";r=(\d+);t=(\d+)$/;
const remainingOf = (res: ApiResponse) => Number(REMAINING.exec(res.headers.get('ratelimit') ?? '')?.[1]);

/** A live organization and a test key of its twin, both windows an hour long (the limits stay the defaults). */
async function livePair() {
  const live = await newOrganization({ limits: { windowSeconds: 3_600 } });
  const twin = await organizations().testTwin(live.organizationId);
  await limits().setLimits(twin.id, { windowSeconds: 3_600 });
  return { ...live, twinId: twin.id, testKey: await apiKeys().create(twin.id) };
}

describe('the test twin is bounded (docs/test-mode.md, "Limits of test mode")', () => {
  it('its request window is its own and smaller; a flood of it leaves its live organization and another tenant their whole windows', async () => {
    expect(config.testRateLimitRequests).toBeLessThan(config.rateLimitRequests);
    const pair = await livePair();
    const other = await newOrganization({ limits: { windowSeconds: 3_600 } });
    // Readable by the customer: the twin's limit is the test default, the live one the live default.
    const twinLimits = await call(api(), '/v1/org/limits', { apiKey: pair.testKey });
    expect(twinLimits.data.requests).toEqual({ limit: config.testRateLimitRequests, windowSeconds: 3_600 });
    const liveLimits = await call(api(), '/v1/org/limits', { apiKey: pair.apiKey });
    expect(liveLimits.data.requests).toEqual({ limit: config.rateLimitRequests, windowSeconds: 3_600 });

    // The flood: the test default (minus the limits read above) plus 20 more, in parallel waves of 10.
    const flood = config.testRateLimitRequests - 1 + 20;
    const statuses: number[] = [];
    for (let sent = 0; sent < flood; sent += 10) {
      const wave = await Promise.all(
        Array.from({ length: Math.min(10, flood - sent) }, () => call(api(), DESCRIBE, { apiKey: pair.testKey })),
      );
      statuses.push(...wave.map((res) => res.status));
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(config.testRateLimitRequests - 1);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    const refused = await call(api(), DESCRIBE, { apiKey: pair.testKey });
    expect(refused.error?.details).toMatchObject({ policy: 'requests', limit: config.testRateLimitRequests, windowSeconds: 3_600 });

    // The live organization (one limits read so far) and another tenant (none) lose nothing to it.
    const live = await call(api(), DESCRIBE, { apiKey: pair.apiKey });
    expect(live.status).toBe(200);
    expect(remainingOf(live)).toBe(config.rateLimitRequests - 2);
    const tenant = await call(api(), DESCRIBE, { apiKey: other.apiKey });
    expect(tenant.status).toBe(200);
    expect(remainingOf(tenant)).toBe(config.rateLimitRequests - 1);
  });

  it('the account IDs its creates store are counted per day; past the quota a create is refused with 429 and stores nothing; live creates are not counted', async () => {
    const pair = await livePair();
    const day = 86_400;
    // The day's count brought to 5 IDs below the quota (as earlier creates would), in the window the creates use.
    const { windowStart } = windowAt(Date.now(), day);
    await limitCounter().add(pair.twinId, 'testAccountIds', day, windowStart, undefined, config.testAccountIdsPerDay - 5);
    const fits = await call(api(), '/v1/campaigns/create', {
      apiKey: pair.testKey,
      body: { name: 'Fits', accountIds: ['test_found_1', 'test_found_2', 'test_found_3', 'test_found_4', 'test_found_5'] },
    });
    // A create that crossed UTC midnight would count in a new day: the scenario holds only within one window.
    if (windowAt(Date.now(), day).windowStart !== windowStart) return;
    expect(fits.status, JSON.stringify(fits.body)).toBe(200);
    const before = await campaigns().idsInStatus(pair.twinId, 'draft');

    const over = await call(api(), '/v1/campaigns/create', { apiKey: pair.testKey, body: { name: 'Over', accountIds: ['test_found_6'] } });
    if (windowAt(Date.now(), day).windowStart !== windowStart) return;
    expect(over.status, JSON.stringify(over.body)).toBe(429);
    expect(over.error?.code).toBe('rate_limited');
    expect(over.error?.details).toEqual({
      policy: 'testAccountIds',
      limit: config.testAccountIdsPerDay,
      windowSeconds: day,
      retryAfterSeconds: Number(over.headers.get('retry-after')),
    });
    expect(await campaigns().idsInStatus(pair.twinId, 'draft')).toEqual(before);

    // The live organization stores as many as it likes: its creates are not counted.
    const liveCreate = await call(api(), '/v1/campaigns/create', {
      apiKey: pair.apiKey,
      body: { name: 'Live', accountIds: ['acc_1', 'acc_2'] },
    });
    expect(liveCreate.status).toBe(200);
    expect(await limitCounter().add(pair.organizationId, 'testAccountIds', day, windowStart)).toEqual({ count: 1, counted: true });
  });
});
