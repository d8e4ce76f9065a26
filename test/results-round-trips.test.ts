/**
 * What a results page asks DynamoDB (docs/results.md "What a page reads"):
 * through HTTP against the local stack, every DynamoDB call of a page
 * counted by a middleware on the shared document client (the request-rate
 * limiter's own calls left out, as test/campaigns-get-list.test.ts does), and
 * the calls grouped into waves (a call's wave: one more than the latest wave
 * among the calls answered before it was sent, so the waves are the round
 * trips of latency one after another). A page of an enriched
 * campaign is two waves: the campaign with its organization, which verifies
 * the API key (one BatchGetItem), beside the suppression sets' versions (one
 * BatchGetItem); then the sequence head beside the ranges' Query. The checks
 * the reads carry still answer: a revoked key 401, another organization's
 * campaign 404, a suppression added before a page applies to that page.
 * Counts only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { apiKeys } from '../lib/root';
import { testContacts } from '../lib/test-mode/accounts';
import { call, useApi } from './support/api';
import { enrichedTestCampaign } from './enrichment/support';

const api = useApi();
const RESULTS = '/v1/campaigns/results';
const ACCOUNTS = 12;

let spyCount = 0;
const removeSpies: (() => void)[] = [];
afterEach(() => {
  for (const remove of removeSpies.splice(0)) remove();
});

/**
 * The DynamoDB calls made while recording, in order, with the wave (round trip) each was sent in: one more than the
 * latest wave among the calls that had answered before it was sent (1 when none had). A call sent beside another is
 * in its wave even when a slower call of the wave before is still in flight (the page's second wave waits for the
 * campaign's read only, not for the suppression versions'), so the count does not depend on which answer comes first.
 */
function recordDynamoDb() {
  const calls: { command: string; wave: number }[] = [];
  /** The latest wave among the calls that have answered. */
  let answered = 0;
  let recording = false;
  const name = `resultsRoundTrips${++spyCount}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const text = JSON.stringify(args.input);
      if (!recording || text.includes('#LIMIT#') || text.includes('limitRequests')) return next(args);
      const wave = answered + 1;
      calls.push({ command: String(context.commandName).replace(/Command$/, ''), wave });
      try {
        return await next(args);
      } finally {
        answered = Math.max(answered, wave);
      }
    },
    { step: 'initialize', name },
  );
  removeSpies.push(() => ddb.middlewareStack.remove(name));
  return {
    async during<T>(work: () => Promise<T>): Promise<{ result: T; calls: typeof calls; waves: number }> {
      calls.length = 0;
      answered = 0;
      recording = true;
      try {
        const result = await work();
        return { result, calls: [...calls], waves: Math.max(0, ...calls.map((c) => c.wave)) };
      } finally {
        recording = false;
      }
    },
  };
}

const enrichedCampaign = () => enrichedTestCampaign(api(), ACCOUNTS);

describe('results page round trips', () => {
  it('reads an enriched campaign’s page in two waves of four DynamoDB calls, the key verified in the campaign’s read', async () => {
    const { apiKey, campaignId } = await enrichedCampaign();
    const spy = recordDynamoDb();
    // The key's first request in this process reads the key item on its own (lib/http/auth.ts); a page after it does not.
    expect((await call(api(), RESULTS, { apiKey, body: { campaignId, limit: 5 } })).status).toBe(200);
    const { result, calls, waves } = await spy.during(() => call(api(), RESULTS, { apiKey, body: { campaignId, afterSeq: 5, limit: 5 } }));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.data.accounts).toHaveLength(5);
    expect(result.body.data.lastSeq).toBe(10);
    expect(
      calls
        .filter((c) => c.wave === 1)
        .map((c) => c.command)
        .sort(),
    ).toEqual(['BatchGetItem', 'BatchGetItem']);
    expect(
      calls
        .filter((c) => c.wave === 2)
        .map((c) => c.command)
        .sort(),
    ).toEqual(['GetItem', 'Query']);
    expect(waves).toBe(2);
    expect(calls).toHaveLength(4);
  });

  it('answers 401 to a revoked key and 404 to another organization’s campaign, in the same reads', async () => {
    const mine = await enrichedCampaign();
    const other = await enrichedCampaign();
    const spy = recordDynamoDb();
    expect((await call(api(), RESULTS, { apiKey: mine.apiKey, body: { campaignId: mine.campaignId, limit: 1 } })).status).toBe(200);
    const foreign = await spy.during(() => call(api(), RESULTS, { apiKey: mine.apiKey, body: { campaignId: other.campaignId } }));
    expect(foreign.result.status).toBe(404);
    expect(foreign.result.body.error?.code).toBe('not_found');
    // Nothing of the other organization's campaign is read beyond the one BatchGetItem keyed by this organization.
    expect(foreign.calls.map((c) => c.command).sort()).toEqual(['BatchGetItem', 'BatchGetItem']);
    expect(foreign.waves).toBe(1);

    // Revoked while this process still holds the key: refused by the campaign read, no other data read.
    await apiKeys().revoke(mine.apiKey);
    const revoked = await spy.during(() => call(api(), RESULTS, { apiKey: mine.apiKey, body: { campaignId: mine.campaignId } }));
    expect(revoked.result.status).toBe(401);
    expect(revoked.result.body.data).toBeNull();
    expect(revoked.calls.some((c) => c.command === 'Query')).toBe(false);
  });

  it('applies a suppression acknowledged before a page to that page', async () => {
    const { apiKey, campaignId, ids } = await enrichedCampaign();
    const first = await call(api(), RESULTS, { apiKey, body: { campaignId, limit: ACCOUNTS } });
    expect(first.status).toBe(200);
    const contactsOf = (page: typeof first) =>
      (page.body.data.accounts as { accountId: string; contacts: unknown[] }[]).reduce((sum, item) => sum + item.contacts.length, 0);
    const before = contactsOf(first);
    const email = testContacts(ids[0]!)[0]!.email!;
    const suppressed = await call(api(), '/v1/privacy/suppressions/create', {
      apiKey,
      body: { identifiers: [{ type: 'email', value: email }], reason: 'opt_out' },
    });
    expect(suppressed.status, JSON.stringify(suppressed.body)).toBe(200);
    const after = await call(api(), RESULTS, { apiKey, body: { campaignId, limit: ACCOUNTS } });
    expect(after.status).toBe(200);
    expect(contactsOf(after)).toBe(before - 1);
  });
});
