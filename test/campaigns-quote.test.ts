/**
 * `POST /v1/campaigns/quote` (docs/launch.md) end to end over HTTP against
 * DynamoDB Local, the local S3 endpoint and the real workflow: the quote's
 * figures are the ones the enrich call that follows acts on, the quote writes
 * nothing at all (the whole table and the whole bucket compared before and
 * after), and its outcome follows enrich's refusal order.
 */
import { describe, expect, it } from 'vitest';
import { createCampaign } from '../lib/campaigns/use-cases';
import { accountLists, campaigns, ledger, organizations } from '../lib/root';
import { newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  describeOrg,
  enrich,
  expectError,
  getCampaign,
  importAccounts,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';
import { accountsPage, bucketFixture, quote, snapshotStorage, storageChanges } from './enrichment/outcomes-support';
import { OBJECT_PREFIXES } from '../lib/objects';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

describe('quote', () => {
  it('gives the figures the enrich call that follows acts on, and writes nothing (table and bucket unchanged)', async () => {
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100, maxEnrichingAccounts: 50 });
    const fixture = await bucketFixture(organizationId);
    const campaignId = await createApiCampaign(api(), apiKey, fixture.submitted, 30);
    const draft = (await getCampaign(api(), apiKey, campaignId)).data;

    // Every object of an organization lives under its own prefixes (lib/objects.ts); listing only those keeps
    // s3rver's listing clear of the objects other test files write meanwhile.
    const prefixes = Object.values(OBJECT_PREFIXES).map((prefix) => `${prefix}${organizationId}/`);
    const before = await snapshotStorage({ prefixes });
    const quoted = await quote(api(), apiKey, campaignId);
    expect(quoted.status, JSON.stringify(quoted.body)).toBe(200);
    expect(quoted.data).toEqual({
      campaignId,
      accounts: fixture.accounts,
      credits: { required: 4, available: 100, shortfall: 0 },
      enrichment: { maxEnrichingAccounts: 50, enrichingAccounts: 0, available: 50 },
      outcome: 'launchable',
    });
    // The same request as a form is the same quote.
    const asForm = await quote(api(), apiKey, campaignId, { body: undefined, form: new URLSearchParams({ campaignId }) });
    expect(asForm.status, JSON.stringify(asForm.body)).toBe(200);
    expect(asForm.data).toEqual(quoted.data);
    const after = await snapshotStorage({ prefixes });

    // Other test files share the bucket (and this file's tests its table) and write meanwhile: nothing that changed may be this test's,
    // but for the items of the organization's request rate and its keys' last use (docs/limits.md, LIMIT_COUNTER_KEY_PATTERN),
    // which the limiter writes whatever the operation.
    const ours = [organizationId, campaignId, fixture.prefix];
    const requestCounter = (key: string) => key.includes(`ORG#${organizationId}#LIMIT#`);
    const changes = storageChanges(before, after);
    expect(changes.filter((change) => ours.some((id) => change.includes(id)) && !requestCounter(change))).toEqual([]);
    const mine = (snapshot: typeof before) =>
      [...snapshot.items.keys(), ...snapshot.objects.keys()].filter((key) => ours.some((id) => key.includes(id)) && !requestCounter(key));
    expect(mine(after)).toEqual(mine(before));
    expect(mine(before).length).toBeGreaterThan(10); // the organization, its key, the campaign, its list, the fixture's items
    // Nothing of the evaluation was kept: the campaign reads as before and has no per-account outcomes.
    expect((await getCampaign(api(), apiKey, campaignId)).data).toEqual(draft);
    expectError(await accountsPage(api(), apiKey, { campaignId }), 409, 'results_not_ready');

    // The enrich call that follows: the same buckets, the quoted charge, the quoted capacity taken.
    const held = useTestWarehouse({ holdAccounts: true });
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.data.accounts).toEqual(quoted.data.accounts);
    expect(launched.data.credits).toEqual({
      charged: quoted.data.credits.required,
      remaining: quoted.data.credits.available - quoted.data.credits.required,
    });
    expect((await describeOrg(api(), apiKey)).enrichment).toEqual({
      maxEnrichingAccounts: quoted.data.enrichment.maxEnrichingAccounts,
      enrichingAccounts: quoted.data.enrichment.enrichingAccounts + quoted.data.accounts.eligible,
    });
    // While enriching, the campaign is no longer an API draft: quote refuses as enrich would for any other state.
    expectError(await quote(api(), apiKey, campaignId), 409, 'campaign_not_enrichable', { status: 'enriching' });
    held.release();
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expectError(await quote(api(), apiKey, campaignId), 409, 'campaign_not_enrichable', { status: 'enriched' });
  });

  it('answers the refusals in the order of docs/launch.md, each with the figures enrich then refuses with', async () => {
    const p = uniquePrefix();
    await importAccounts([...activeAccounts(p, 4)]);
    const eligibleIds = [0, 1, 2, 3].map((i) => `${p}_${i}`);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 2, maxEnrichingAccounts: 3 });
    await organizations().setCapacity(organizationId, { externalEnrichingAccounts: 1 });

    // Nothing eligible: no_eligible_accounts first, although credits and capacity would refuse too.
    const none = await createApiCampaign(api(), apiKey, [`${p}_unknown1`, `${p}_unknown2`]);
    const noneQuote = await quote(api(), apiKey, none);
    expect(noneQuote.data).toEqual({
      campaignId: none,
      accounts: { requested: 2, eligible: 0, excluded: { total: 2, invalid: 2, recentlyEnriched: 0, crmExcluded: 0 } },
      credits: { required: 0, available: 2, shortfall: 0 },
      enrichment: { maxEnrichingAccounts: 3, enrichingAccounts: 1, available: 2 },
      outcome: 'no_eligible_accounts',
    });
    expectError(await enrich(api(), apiKey, none), 422, 'no_eligible_accounts', { requested: noneQuote.data.accounts.requested });

    // 4 eligible, 2 credits, 1 of 3 enriching: insufficient_credits comes before concurrency_limit_exceeded.
    const campaignId = await createApiCampaign(api(), apiKey, eligibleIds);
    const short = await quote(api(), apiKey, campaignId);
    expect(short.data).toEqual({
      campaignId,
      accounts: { requested: 4, eligible: 4, excluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 } },
      credits: { required: 4, available: 2, shortfall: 2 },
      enrichment: { maxEnrichingAccounts: 3, enrichingAccounts: 1, available: 2 },
      outcome: 'insufficient_credits',
    });
    expectError(await enrich(api(), apiKey, campaignId), 402, 'insufficient_credits', short.data.credits);

    // Credits topped up: the ceiling refuses next.
    await ledger().adjust(organizationId, 8);
    const full = await quote(api(), apiKey, campaignId);
    expect(full.data).toMatchObject({ credits: { required: 4, available: 10, shortfall: 0 }, outcome: 'concurrency_limit_exceeded' });
    expectError(await enrich(api(), apiKey, campaignId), 429, 'concurrency_limit_exceeded', {
      limit: full.data.enrichment.maxEnrichingAccounts,
      inFlight: full.data.enrichment.enrichingAccounts,
      requested: full.data.accounts.eligible,
    });

    // Ceiling raised: launchable, and enrich launches.
    await organizations().setCapacity(organizationId, { maxEnrichingAccounts: 10 });
    const ok = await quote(api(), apiKey, campaignId);
    expect(ok.data).toMatchObject({ enrichment: { maxEnrichingAccounts: 10, enrichingAccounts: 1, available: 9 }, outcome: 'launchable' });
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.data.credits).toEqual({ charged: 4, remaining: 6 });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
  });

  it('refuses as enrich does: not_found for unknown and foreign campaigns, campaign_not_enrichable for other surfaces, invalid_request naming the field', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 2));
    const mine = await newOrganization();
    const other = await newOrganization();
    const theirs = await createApiCampaign(api(), other.apiKey, [`${p}_0`]);

    expectError(await quote(api(), mine.apiKey, theirs), 404, 'not_found', { resource: 'campaign', id: theirs });
    expectError(await quote(api(), mine.apiKey, 'camp_111111111111111111111'), 404, 'not_found', {
      resource: 'campaign',
      id: 'camp_111111111111111111111',
    });

    const ui = await createCampaign(
      { campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() },
      { organizationId: mine.organizationId, name: 'From the interface', accountIds: [`${p}_0`, `${p}_1`], createdVia: 'ui' },
    );
    const refused = await quote(api(), mine.apiKey, ui.id);
    expectError(refused, 409, 'campaign_not_enrichable', { status: 'draft' });
    expect(refused.error?.message).toMatch(/created via "ui"/);

    const missing = await quote(api(), mine.apiKey, '', { body: {} });
    expectError(missing, 400, 'invalid_request');
    expect(missing.error?.details.issues.join('\n')).toMatch(/campaignId/);
    const extra = await quote(api(), mine.apiKey, '', { body: { campaignId: theirs, limit: 3 } });
    expectError(extra, 400, 'invalid_request');
    expect(extra.error?.details.issues.join('\n')).toMatch(/limit/);
  });

  it('is documented, with accounts, in the OpenAPI document: request and response examples, every error status', async () => {
    const document = (await (await fetch(`${api()}/openapi.json`)).json()) as any;
    const quoteOp = document.paths['/v1/campaigns/quote'].post;
    const accountsOp = document.paths['/v1/campaigns/accounts'].post;
    expect(Object.keys(quoteOp.responses)).toEqual(['200', '400', '401', '403', '404', '405', '409', '429', '500']);
    expect(Object.keys(accountsOp.responses)).toEqual(['200', '400', '401', '403', '404', '405', '409', '410', '429', '500']);
    expect(quoteOp.requestBody.content['application/json'].example).toEqual({ campaignId: expect.stringMatching(/^camp_/) });
    expect(accountsOp.requestBody.content['application/json'].example).toMatchObject({ filters: { outcome: ['invalid', 'not_found'] } });
    const { LaunchQuote, CampaignAccountsPage, AccountOutcome } = document.components.schemas;
    expect(LaunchQuote.example).toMatchObject({
      outcome: 'insufficient_credits',
      credits: { required: 212, available: 150, shortfall: 62 },
    });
    expect(Object.keys(CampaignAccountsPage.example.summary)).toEqual([
      'invalid',
      'recently_enriched',
      'crm_excluded',
      'pending',
      'found',
      'not_found',
    ]);
    expect(AccountOutcome.enum).toEqual(['invalid', 'recently_enriched', 'crm_excluded', 'pending', 'found', 'not_found']);
  });
});
