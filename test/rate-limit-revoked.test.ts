/**
 * A revoked key spends nothing of its organization's request window
 * (docs/limits.md, "A revoked key spends nothing"; issue #37 R1), across two
 * processes on one DynamoDB Local table: two pipelines built here, each with
 * its own key cache and request limiter (two warm Lambda containers), served
 * over HTTP. Describe verifies the key in its organization read (`in-read`),
 * the other operation reads the key item before its use case (`before`).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiKeyCache } from '../lib/http/auth';
import { createApiHandler } from '../lib/http/pipeline';
import { defineOperation } from '../lib/http/operation';
import { describeOrganizationOperation } from '../lib/organizations/schema';
import { apiKeys, describeOrganization, limits, newRequestLimiter, organizations } from '../lib/root';
import { call, newOrganization, type ApiResponse } from './support/api';
import { serveHandler } from './support/serve-handler';

/** One process's request limiter, wired as lib/root.ts wires it. */
const processLimiter = () => newRequestLimiter();

const findApiKey = (keyHash: string) => apiKeys().findByHash(keyHash);

// Process A: describe, the key verified on the organization's list of active keys.
const describeA = serveHandler(
  createApiHandler(
    describeOrganizationOperation,
    (_input, { organizationId, keyCheck }) => describeOrganization(organizations(), organizationId, keyCheck),
    { findApiKey, apiKeyCache: new ApiKeyCache(), requestLimiter: processLimiter() },
    { keyCheck: 'in-read' },
  ),
  { path: describeOrganizationOperation.path, functionName: 'ProcessA' },
);

// Process B: an operation whose key item is read before its use case.
const pingOperation = defineOperation({
  operationId: 'revokedKeyWindowTest',
  scope: 'org:read',
  path: '/v1/test/ping',
  request: z.strictObject({}),
});
const pingB = serveHandler(
  createApiHandler(pingOperation, async (_input, { organizationId }) => ({ organizationId }), {
    findApiKey,
    apiKeyCache: new ApiKeyCache(),
    requestLimiter: processLimiter(),
  }),
  { path: pingOperation.path, functionName: 'ProcessB' },
);

/** The `r` of the RateLimit field (requests left in the window). */
const remainingOf = (res: ApiResponse) => Number(/;r=(\d+);/.exec(res.headers.get('ratelimit') ?? '')?.[1]);

describe('a revoked key flooding two processes (docs/limits.md)', () => {
  it('refuses every request of the revoked key and leaves the live keys the whole rest of their window', async () => {
    const LIMIT = 6;
    const org = await newOrganization();
    await limits().setLimits(org.organizationId, { requests: LIMIT, windowSeconds: 3600 });
    const live = await apiKeys().create(org.organizationId);
    const leaked = org.apiKey;
    // Both processes know the leaked key (cached: key → organization): two requests of the window, spent honestly.
    expect((await call(describeA(), describeOrganizationOperation.path, { apiKey: leaked })).status).toBe(200);
    expect((await call(pingB(), pingOperation.path, { apiKey: leaked, body: {} })).status).toBe(200);

    await apiKeys().revoke(leaked);
    // The flood: 25 requests at once on each process, each far more than the window left.
    const flood = await Promise.all(
      Array.from({ length: 25 }, () => [
        call(describeA(), describeOrganizationOperation.path, { apiKey: leaked }),
        call(pingB(), pingOperation.path, { apiKey: leaked, body: {} }),
      ]).flat(),
    );
    // Each answer refuses: 401, or 429 while the flood's own counts (given back as each 401 leaves) are over
    // the limit in that process — a refusal that shows no data and does nothing.
    for (const res of flood) expect(['revoked_api_key', 'rate_limited']).toContain(res.error?.code);
    expect(flood.filter((res) => res.status === 401 && res.headers.get('ratelimit') !== null)).toEqual([]);
    // A second wave: the key is forgotten by both processes, read and refused before any count.
    const again = await Promise.all([
      call(describeA(), describeOrganizationOperation.path, { apiKey: leaked }),
      call(pingB(), pingOperation.path, { apiKey: leaked, body: {} }),
    ]);
    expect(again.map((res) => res.status)).toEqual([401, 401]);

    // The live key has the window's other LIMIT - 2 requests, on either process, and not one more.
    const left: number[] = [];
    for (let i = 0; i < LIMIT - 2; i++) {
      const res =
        i % 2 === 0
          ? await call(describeA(), describeOrganizationOperation.path, { apiKey: live })
          : await call(pingB(), pingOperation.path, { apiKey: live, body: {} });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      left.push(remainingOf(res));
    }
    expect(left).toEqual([3, 2, 1, 0]);
    expect((await call(describeA(), describeOrganizationOperation.path, { apiKey: live })).error?.code).toBe('rate_limited');
  });
});
