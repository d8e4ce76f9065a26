/**
 * An export or upload that fails after its quota was counted gives it back
 * (docs/limits.md, "Exports and uploads per hour"; third audit, R8): with a
 * limit of 1 per hour, a failed export (the file's write to S3 fails) or a
 * failed upload (its record's write fails) leaves the hour's one use free,
 * so the next one succeeds; a refused one (429) is still refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import { activeAccounts, createApiCampaign, enrich, expectError, importAccounts, uniquePrefix, waitForStatus } from './enrichment/support';
import { injectFault, removeAllFaults, s3InternalError, throttling } from './hostile/support/faults';

const api = useApi();
afterEach(() => removeAllFaults());

/** 429 `rate_limited` of `policy`, its limit of 1 used. */
function expectRefused(res: ApiResponse, policy: string): void {
  expectError(res, 429, 'rate_limited');
  expect(res.error?.details).toMatchObject({ policy, limit: 1, windowSeconds: 3600 });
}

describe('a quota use whose work failed is given back', () => {
  it("export: the file write fails (500), then the hour's one export still succeeds, then the next is refused", async () => {
    const org = await newOrganization({ smbCredits: 10, limits: { exportsPerHour: 1 } });
    const list = activeAccounts(uniquePrefix(), 2);
    await importAccounts(list);
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      list.map((a) => a.accountId),
    );
    expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), org.apiKey, campaignId, 'enriched');

    const fault = injectFault({
      client: 's3',
      command: /^(PutObject|CreateMultipartUpload)Command$/,
      match: campaignId,
      times: Infinity,
      error: s3InternalError,
    });
    const failed = await call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } });
    expect(failed.status, JSON.stringify(failed.body)).toBe(500);
    expect(fault.failed).toBeGreaterThan(0);
    fault.remove();

    const exported = await call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    expectRefused(await call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } }), 'exports');
  });

  it("upload: the record write fails (500), then the hour's one upload still succeeds, then the next is refused", async () => {
    const org = await newOrganization({ limits: { uploadsPerHour: 1 } });
    const fault = injectFault({
      client: 'dynamodb',
      // The record and its audit entry are one transaction (docs/audit.md).
      command: 'TransactWriteItemsCommand',
      match: (_input, text) => text.includes(org.organizationId) && text.includes('UPLOAD'),
      times: Infinity,
      error: throttling,
    });
    const failed = await call(api(), '/v1/uploads/create', { apiKey: org.apiKey, body: {} });
    expect(failed.status, JSON.stringify(failed.body)).toBe(500);
    expect(fault.failed).toBeGreaterThan(0);
    fault.remove();

    const created = await call(api(), '/v1/uploads/create', { apiKey: org.apiKey, body: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expectRefused(await call(api(), '/v1/uploads/create', { apiKey: org.apiKey, body: {} }), 'uploads');
  });
});
