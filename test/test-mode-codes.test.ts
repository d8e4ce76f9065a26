/**
 * docs/test-mode.md's recipes (docs/test-mode.md; issue #32): every webhook event
 * and error code a test key can produce deterministically, produced with a
 * test key through HTTP against the local stack, and the operator's `--test`
 * options (run in process, as `npx ops` runs them). Timing-dependent recipes
 * (`enrichment_pending`, `idempotency_key_in_use`, the self-serve
 * `concurrency_limit_exceeded`) and those of issues built in parallel (limits,
 * cancel) are documented there and not run here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { apiKeys, organizations } from '../lib/root';
import { REVOKED_TEST_API_KEY } from '../lib/ids';
import { TEST_TWIN_CREDITS } from '../lib/organizations/store';
import { keyCreate, orgCapacity, orgCredits } from '../infra/ops/commands/organizations';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import { createApiCampaign, enrich, expectError, uniquePrefix, waitForStatus } from './enrichment/support';
import { startReceiver, webhookHeaders, type Receiver } from './webhooks/receiver';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.2';
// Test campaigns' results expire 3 s after completion in this file (TEST_RESULTS_ACCESS_PERIOD_SECONDS, 1 hour by default).
process.env.TEST_RESULTS_ACCESS_PERIOD_SECONDS = '3';

const api = useApi({ webhooks: { intervalMs: 100 } });

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const noProgress = { start: () => undefined, update: () => undefined, stop: () => undefined };

/** A live organization and a test key of its twin, issued by `key:create --org ID --test`. */
async function testKeyOf() {
  const live = await newOrganization({ name: `Codes ${uniquePrefix()}` });
  const { apiKey: testKey } = (await keyCreate.run({
    options: { org: live.organizationId, test: true },
    args: [],
    progress: noProgress,
  })) as { apiKey: string };
  return { ...live, testKey };
}

const marked = (res: ApiResponse) => expect(res.headers.get('test-mode')).toBe('true');

describe('the self-serve recipes of docs/test-mode.md', () => {
  it('produce invalid_request, invalid_api_key, revoked_api_key, not_found, method_not_allowed, results_not_ready, no_eligible_accounts, idempotency_key_reused and webhook_endpoint_limit_reached', async () => {
    const { testKey } = await testKeyOf();
    const p = uniquePrefix();
    const codes: [ApiResponse, number, string][] = [];
    codes.push([await call(api(), '/v1/campaigns/get', { apiKey: testKey, body: { campaignId: 'x' } }), 400, 'invalid_request']);
    codes.push([await call(api(), '/v1/org/describe', { apiKey: `cek_test_${'1'.repeat(40)}` }), 401, 'invalid_api_key']);
    codes.push([await call(api(), '/v1/org/describe', { apiKey: REVOKED_TEST_API_KEY }), 401, 'revoked_api_key']);
    codes.push([
      await call(api(), '/v1/campaigns/get', { apiKey: testKey, body: { campaignId: 'camp_111111111111111111111' } }),
      404,
      'not_found',
    ]);
    codes.push([await call(api(), '/v1/anything', { apiKey: testKey }), 404, 'not_found']);

    const draft = await createApiCampaign(api(), testKey, [`test_found_${p}`]);
    codes.push([await call(api(), '/v1/campaigns/export', { apiKey: testKey, body: { campaignId: draft } }), 409, 'results_not_ready']);
    codes.push([await call(api(), '/v1/campaigns/accounts', { apiKey: testKey, body: { campaignId: draft } }), 409, 'results_not_ready']);

    const none = await createApiCampaign(api(), testKey, [`test_closed_${p}`, `test_inactive_${p}`, `test_crm_${p}`, `acc_${p}`]);
    const refused = await enrich(api(), testKey, none);
    expectError(refused, 422, 'no_eligible_accounts', { requested: 4 });
    marked(refused);

    const headers = { 'idempotency-key': `reuse-${p}` };
    expect(
      (await call(api(), '/v1/campaigns/create', { apiKey: testKey, headers, body: { name: 'a', accountIds: [`test_found_${p}`] } }))
        .status,
    ).toBe(200);
    codes.push([
      await call(api(), '/v1/campaigns/create', { apiKey: testKey, headers, body: { name: 'b', accountIds: [`test_found_${p}`] } }),
      422,
      'idempotency_key_reused',
    ]);

    const hook = await startReceiver();
    receivers.push(hook);
    for (let i = 0; i < 10; i++)
      expect((await call(api(), '/v1/webhooks/create', { apiKey: testKey, body: { url: `${hook.url}/${i}` } })).status).toBe(200);
    codes.push([
      await call(api(), '/v1/webhooks/create', { apiKey: testKey, body: { url: `${hook.url}/11` } }),
      409,
      'webhook_endpoint_limit_reached',
    ]);

    for (const [res, status, code] of codes) {
      expectError(res, status, code);
      marked(res);
    }

    const get = await fetch(`${api()}/v1/campaigns/get`, { headers: { authorization: `Bearer ${testKey}` } });
    expect(get.status).toBe(405);
    expect(((await get.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    expect(get.headers.get('test-mode')).toBe('true');
  });

  it('an enriched test campaign gives campaign_not_enrichable and campaign_not_editable, then expires: campaign.expired and results_expired; webhook.test arrives', async () => {
    const { testKey } = await testKeyOf();
    const hook = await startReceiver();
    receivers.push(hook);
    const endpoint = await call(api(), '/v1/webhooks/create', { apiKey: testKey, body: { url: hook.url } });
    expect(endpoint.status).toBe(200);
    const verify = (at: number) =>
      new Webhook(endpoint.data.secret).verify(hook.requests[at]!.body, webhookHeaders(hook.requests[at]!)) as {
        type: string;
        data: { campaign?: { id: string; status: string } };
      };

    expect((await call(api(), '/v1/webhooks/test', { apiKey: testKey, body: { endpointId: endpoint.data.id } })).status).toBe(200);
    await hook.received(1);
    expect(verify(0).type).toBe('webhook.test');

    const campaignId = await createApiCampaign(api(), testKey, [`test_found_${uniquePrefix()}`]);
    expect((await enrich(api(), testKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), testKey, campaignId, 'enriched');
    // Whichever of these runs after the expiry, the campaign is not a draft: both refusals hold (status enriched or expired).
    const again = await enrich(api(), testKey, campaignId);
    expect(again.error?.code).toBe('campaign_not_enrichable');
    expect(['enriched', 'expired']).toContain(again.error?.details?.status);
    const update = await call(api(), '/v1/campaigns/update', { apiKey: testKey, body: { campaignId, name: 'renamed' } });
    expect(update.error?.code).toBe('campaign_not_editable');

    await waitForStatus(api(), testKey, campaignId, 'expired');
    const expired = await call(api(), '/v1/campaigns/export', { apiKey: testKey, body: { campaignId } });
    expectError(expired, 410, 'results_expired');
    marked(expired);
    // The endpoint takes every event: the one batch's campaign.accounts_processed arrives too (docs/results.md).
    await hook.received(4);
    const types = hook.requests.map((_, i) => verify(i).type);
    expect(types.filter((type) => type !== 'campaign.accounts_processed')).toEqual([
      'webhook.test',
      'campaign.enriched',
      'campaign.expired',
    ]);
    expect(types.filter((type) => type === 'campaign.accounts_processed')).toHaveLength(1);
    expect(verify(types.indexOf('campaign.expired')).data.campaign).toMatchObject({ id: campaignId, status: 'expired' });
  });
});

describe('the operator recipes of docs/test-mode.md (--test)', () => {
  it('org:credits --test empties the test balance: insufficient_credits; the live balance stays', async () => {
    const { organizationId, apiKey, testKey } = await testKeyOf();
    const printed = await orgCredits.run({
      options: { org: organizationId, add: -TEST_TWIN_CREDITS, test: true },
      args: [],
      progress: noProgress,
    });
    expect(printed).toEqual({ organizationId, smb: 0, adjustmentId: expect.stringMatching(/^adj_/) });
    const campaignId = await createApiCampaign(api(), testKey, [`test_found_${uniquePrefix()}`]);
    const quote = await call(api(), '/v1/campaigns/quote', { apiKey: testKey, body: { campaignId } });
    expect(quote.data.outcome).toBe('insufficient_credits');
    const refused = await enrich(api(), testKey, campaignId);
    expectError(refused, 402, 'insufficient_credits', { available: 0, required: 1, shortfall: 1 });
    marked(refused);
    expect((await call(api(), '/v1/org/describe', { apiKey })).data.credits.smb).toBe(10_000);
    const ledger = await call(api(), '/v1/org/ledger', { apiKey: testKey });
    expect(ledger.data.entries.map((e: { reason: string; amount: number }) => [e.reason, e.amount])).toEqual([
      ['operator', -TEST_TWIN_CREDITS],
      ['initial_grant', TEST_TWIN_CREDITS],
    ]);
  });

  it('org:capacity --test --max-enriching 1: concurrency_limit_exceeded; the live ceiling stays', async () => {
    const { organizationId, apiKey, testKey } = await testKeyOf();
    expect(
      await orgCapacity.run({ options: { org: organizationId, maxEnriching: 1, test: true }, args: [], progress: noProgress }),
    ).toEqual({ enrichingAccounts: 0, maxEnrichingAccounts: 1 });
    const p = uniquePrefix();
    const campaignId = await createApiCampaign(api(), testKey, [`test_found_${p}_1`, `test_found_${p}_2`]);
    const refused = await enrich(api(), testKey, campaignId);
    expectError(refused, 429, 'concurrency_limit_exceeded', { limit: 1, inFlight: 0, requested: 2 });
    marked(refused);
    expect((await call(api(), '/v1/org/describe', { apiKey })).data.enrichment.maxEnrichingAccounts).toBe(5_000);
  });

  it('key:create --test reuses the twin: a second test key acts on the same campaigns', async () => {
    const { organizationId, testKey } = await testKeyOf();
    const campaignId = await createApiCampaign(api(), testKey, [`test_found_${uniquePrefix()}`]);
    const { apiKey: second } = (await keyCreate.run({ options: { org: organizationId, test: true }, args: [], progress: noProgress })) as {
      apiKey: string;
    };
    expect(second).toMatch(/^cek_test_/);
    expect((await call(api(), '/v1/campaigns/get', { apiKey: second, body: { campaignId } })).data.id).toBe(campaignId);
    const live = (await keyCreate.run({ options: { org: organizationId }, args: [], progress: noProgress })) as { apiKey: string };
    expect(live.apiKey).not.toMatch(/^cek_test_/);
    expectError(await call(api(), '/v1/campaigns/get', { apiKey: live.apiKey, body: { campaignId } }), 404, 'not_found');
    expect((await organizations().get(organizationId))?.testOrganizationId).toBeDefined();
    expect(await apiKeys().find(second)).toMatchObject({ organizationId: (await organizations().get(organizationId))!.testOrganizationId });
  });
});
