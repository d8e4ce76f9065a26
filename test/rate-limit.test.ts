/**
 * The request rate per organization (docs/limits.md; lib/http/rate-limit.ts),
 * through HTTP against the local API server and DynamoDB Local, and the
 * limiter on its own with an injected clock (the window's reset, without
 * waiting for wall time).
 *
 * Limits are set per organization (the operator's override) before its first
 * request, so the test process's limiter reads them with its first count.
 */
import { describe, expect, it } from 'vitest';
import { apiKeys, campaigns, limits, requestDays } from '../lib/root';
import { RequestLimiter } from '../lib/http/rate-limit';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import {
  activeAccounts,
  balance,
  createApiCampaign,
  DESCRIBE,
  ENRICH,
  GET,
  importAccounts,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';

const api = useApi();

const POLICY = /^"requests";q=(\d+);w=(\d+)$/;
const REMAINING = /^"requests";r=(\d+);t=(\d+)$/;

/** The RateLimit fields of an answer, parsed (and required). */
function rateLimitOf(res: ApiResponse): { limit: number; window: number; remaining: number; reset: number } {
  const policy = POLICY.exec(res.headers.get('ratelimit-policy') ?? '');
  const left = REMAINING.exec(res.headers.get('ratelimit') ?? '');
  expect(policy, `RateLimit-Policy: ${res.headers.get('ratelimit-policy')}`).not.toBeNull();
  expect(left, `RateLimit: ${res.headers.get('ratelimit')}`).not.toBeNull();
  return { limit: Number(policy![1]), window: Number(policy![2]), remaining: Number(left![1]), reset: Number(left![2]) };
}

/** A new organization limited to `requests` per `windowSeconds` (set before its first request). */
async function limitedOrganization(requests: number, windowSeconds: number, credits = 100) {
  const org = await newOrganization({ smbCredits: credits });
  await limits().setLimits(org.organizationId, { requests, windowSeconds });
  return org;
}

/** Asserts a 429 `rate_limited` of the request policy with every header and detail. */
function expectRateLimited(res: ApiResponse, limit: number, windowSeconds: number): void {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.error?.code).toBe('rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.error?.details).toEqual({ policy: 'requests', limit, windowSeconds, retryAfterSeconds: retryAfter });
  const fields = rateLimitOf(res);
  expect(fields).toMatchObject({ limit, window: windowSeconds, remaining: 0 });
  expect(fields.reset).toBeGreaterThanOrEqual(1);
  expect(fields.reset).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('the request rate of an organization (docs/limits.md)', () => {
  it('counts down on every answer; over the limit: 429 rate_limited with Retry-After, typed details and the RateLimit fields', async () => {
    const org = await limitedOrganization(3, 3600);
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(api(), DESCRIBE, { apiKey: org.apiKey });
      expect(res.status).toBe(200);
      const fields = rateLimitOf(res);
      expect(fields).toMatchObject({ limit: 3, window: 3600 });
      remaining.push(fields.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    // Refused: by the count (the first), then by what this process knows (no write), the same answer.
    expectRateLimited(await call(api(), DESCRIBE, { apiKey: org.apiKey }), 3, 3600);
    expectRateLimited(await call(api(), DESCRIBE, { apiKey: org.apiKey }), 3, 3600);
    // A body the operation would refuse is not even read: the limit answers first.
    expectRateLimited(await call(api(), '/v1/campaigns/create', { apiKey: org.apiKey, body: { unknown: true } }), 3, 3600);
  });

  it('counts all keys of an organization together; another organization is unaffected', async () => {
    const org = await limitedOrganization(4, 3600);
    const second = await apiKeys().create(org.organizationId);
    const other = await limitedOrganization(4, 3600);
    expect((await call(api(), DESCRIBE, { apiKey: org.apiKey })).status).toBe(200);
    expect((await call(api(), DESCRIBE, { apiKey: second })).status).toBe(200);
    expect((await call(api(), DESCRIBE, { apiKey: org.apiKey })).status).toBe(200);
    expect(rateLimitOf(await call(api(), DESCRIBE, { apiKey: second })).remaining).toBe(0);
    expectRateLimited(await call(api(), DESCRIBE, { apiKey: org.apiKey }), 4, 3600);
    expectRateLimited(await call(api(), DESCRIBE, { apiKey: second }), 4, 3600);
    // The other organization has its whole window.
    const res = await call(api(), DESCRIBE, { apiKey: other.apiKey });
    expect(res.status).toBe(200);
    expect(rateLimitOf(res)).toMatchObject({ limit: 4, remaining: 3 });
  });

  it('the window resets: the organization is served again once its window ends', async () => {
    const org = await limitedOrganization(1, 1);
    // A full window used, then refused (the count of that window); the next window serves it again.
    const answers: number[] = [];
    await pollUntil(
      async () => {
        const res = await call(api(), DESCRIBE, { apiKey: org.apiKey });
        answers.push(res.status);
        if (res.status === 429) expectRateLimited(res, 1, 1);
        return answers;
      },
      (seen) => seen.includes(429) && seen[seen.length - 1] === 200,
      { intervalMs: 50 },
    );
    expect(answers.indexOf(429)).toBeGreaterThan(0);
  });

  it('a refused enrich writes nothing: no lock, no evaluation, no charge (its read ran beside the count)', async () => {
    const org = await limitedOrganization(2, 3600);
    const list = activeAccounts(uniquePrefix(), 2);
    await importAccounts(list);
    // Create and get use the window's 2 requests; enrich is the third.
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      list.map((a) => a.accountId),
    );
    const before = await campaigns().get(org.organizationId, campaignId);
    expect((await call(api(), GET, { apiKey: org.apiKey, body: { campaignId } })).status).toBe(200);
    expectRateLimited(await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId } }), 2, 3600);
    expect(await campaigns().get(org.organizationId, campaignId)).toEqual(before);
    expect(await balance(org.organizationId)).toBe(100);
  });

  it('an unauthenticated request is neither counted nor given RateLimit fields', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: 'cek_thisKeyWasNeverIssuedToAnyoneAtAll0' });
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit')).toBeNull();
    expect(res.headers.get('ratelimit-policy')).toBeNull();
  });
});

describe('exports and uploads per hour (docs/limits.md)', () => {
  /** A 429 of an hourly policy: every detail and Retry-After. */
  function expectHourlyRefusal(res: ApiResponse, policy: 'exports' | 'uploads', limit: number): void {
    expect(res.status, JSON.stringify(res.body)).toBe(429);
    expect(res.error?.code).toBe('rate_limited');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(res.error?.details).toEqual({ policy, limit, windowSeconds: 3600, retryAfterSeconds: retryAfter });
    // The request rate's fields still describe the request window.
    expect(rateLimitOf(res).window).toBe(10);
  }

  it('uploads: the limit per hour, then 429 policy "uploads"; a refused upload writes nothing', async () => {
    const org = await newOrganization({ limits: { uploadsPerHour: 2 } });
    for (let i = 0; i < 2; i++) expect((await call(api(), '/v1/uploads/create', { apiKey: org.apiKey, body: {} })).status).toBe(200);
    expectHourlyRefusal(await call(api(), '/v1/uploads/create', { apiKey: org.apiKey, body: {} }), 'uploads', 2);
    // Counted per organization.
    const other = await newOrganization({ limits: { uploadsPerHour: 2 } });
    expect((await call(api(), '/v1/uploads/create', { apiKey: other.apiKey, body: {} })).status).toBe(200);
  });

  it('exports: the limit per hour, then 429 policy "exports"; a refusal that is not an export (not ready) does not count', async () => {
    const org = await newOrganization({ smbCredits: 10, limits: { exportsPerHour: 1 } });
    const list = activeAccounts(uniquePrefix(), 1);
    await importAccounts(list);
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      list.map((a) => a.accountId),
    );
    expect((await call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } })).error?.code).toBe('results_not_ready');
    expect((await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId } })).status).toBe(200);
    await waitForStatus(api(), org.apiKey, campaignId, 'enriched');
    expect((await call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } })).status).toBe(200);
    expectHourlyRefusal(await call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } }), 'exports', 1);
  });
});

describe('RequestLimiter with an injected clock (fixed windows, counted in DynamoDB Local)', () => {
  it('refuses past the limit until the window ends, then counts the new window from 1; a policy change applies when read again', async () => {
    const org = await newOrganization();
    let now = Date.UTC(2031, 0, 1, 0, 0, 0); // a window start: windows of 10 s align on it
    let policy = { limit: 2, windowSeconds: 10 };
    const limiter = new RequestLimiter({
      days: requestDays(),
      policyOf: async () => policy,
      defaults: () => policy,
      policySeconds: 60,
      now: () => now,
    });
    const admit = () => limiter.admit(org.organizationId);
    expect(await admit()).toEqual({ limit: 2, windowSeconds: 10, remaining: 1, resetSeconds: 10, allowed: true });
    now += 4_000;
    expect(await admit()).toEqual({ limit: 2, windowSeconds: 10, remaining: 0, resetSeconds: 6, allowed: true });
    expect(await admit()).toMatchObject({ remaining: 0, resetSeconds: 6, allowed: false });
    // Known to this process now: refused without a count, the reset counting down.
    now += 5_500;
    expect(await limiter.knownRefusal(org.organizationId)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    now += 500; // the next window
    expect(limiter.knownRefusal(org.organizationId)).toBeUndefined();
    expect(await admit()).toEqual({ limit: 2, windowSeconds: 10, remaining: 1, resetSeconds: 10, allowed: true });
    // A new limit is used once the policy is read again (after policySeconds).
    policy = { limit: 5, windowSeconds: 10 };
    expect(await admit()).toMatchObject({ limit: 2, allowed: true, remaining: 0 });
    now += 60_000;
    expect(await admit()).toMatchObject({ limit: 5, remaining: 4, allowed: true });
  });

  it('gives back the count of a request whose key was refused: the window and any refusal it caused are as before it (docs/limits.md)', async () => {
    const org = await newOrganization();
    const now = Date.UTC(2031, 0, 1, 0, 0, 0);
    const policy = { limit: 2, windowSeconds: 10 };
    const limiter = new RequestLimiter({ days: requestDays(), policyOf: async () => policy, defaults: () => policy, now: () => now });
    const admit = () => limiter.admit(org.organizationId);
    const first = await admit();
    expect(first).toMatchObject({ remaining: 1, allowed: true });
    await limiter.giveBack(first);
    await limiter.giveBack(first); // once only
    expect(await admit()).toMatchObject({ remaining: 1, allowed: true });
    expect(await admit()).toMatchObject({ remaining: 0, allowed: true });
    const refused = await admit();
    expect(refused).toMatchObject({ allowed: false });
    expect(limiter.knownRefusal(org.organizationId)).toBeDefined();
    // The refused request's count given back: the process forgets the refusal it caused, the window is still full.
    await limiter.giveBack(refused);
    expect(limiter.knownRefusal(org.organizationId)).toBeUndefined();
    expect(await admit()).toMatchObject({ remaining: 0, allowed: false });
    // A known refusal counted nothing: nothing to give back, the refusal stays.
    const known = await admit();
    await limiter.giveBack(known);
    expect(limiter.knownRefusal(org.organizationId)).toBeDefined();
  });
});
