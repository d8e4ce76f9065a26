/**
 * Every authenticated operation's answers carry the IETF RateLimit fields,
 * a success and a refusal alike, and describe, get, enrich and quote carry
 * `Credits-Remaining` (docs/limits.md; the operations whose docs declare it): a table over infra/routes.ts
 * API_ROUTES, each operation called with its documented example (test/support/operation-examples.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, type ApiRoute } from '../infra/routes';
import { documented } from '../lib/contract/openapi';
import { exampleRequest } from './support/operation-examples';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  enrich,
  importAccounts,
  pollUntil,
  testWarehouse,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';
import { useWarehouse } from '../lib/root';
import { startReceiver, type Receiver } from './webhooks/receiver';

// A receiver on this machine for the webhook operations.
process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';

const api = useApi({ webhooks: { intervalMs: 100 } });

/** What each operation's success needs, built once for the organization of the table. */
interface Fixture {
  apiKey: string;
  draftId: string;
  /** A draft only quote reads (enrich launches {@link draftId}). */
  quotedId: string;
  enrichedId: string;
  /** Canceled while enriching: a repeated cancel answers it again (200). */
  canceledId: string;
  endpointId: string;
  messageId: string;
  /** Two keys made by keys/create: one rotate renews, one revoke ends (neither is the fixture's own key). */
  rotatedKeyId: string;
  revokedKeyId: string;
  /** A suppression the customer made (suppressions/delete lifts it) and an erasure (erasures/get reads it). */
  suppressionId: string;
  erasureId: string;
  smb: () => Promise<number>;
}

/**
 * A valid body per operation (a 2xx): its documented example (test/support/operation-examples.ts) with the fixture's
 * resources, each operation given the one its success needs.
 */
const successBody = (route: ApiRoute, f: Fixture) =>
  exampleRequest(route, {
    ids: { camp_: f.enrichedId, whe_: f.endpointId, msg_: f.messageId, sup_: f.suppressionId, era_: f.erasureId },
    byOperation: {
      // A repeat call on the enriched campaign's launch would be a refusal: launch the draft.
      enrichCampaign: { camp_: f.draftId },
      // Its example excludes accounts enriched within 90 days: not on the draft enrich launches (quote still answers 200 with its outcome).
      updateCampaign: { camp_: f.quotedId },
      quoteCampaign: { camp_: f.quotedId },
      // A cancel repeated on a campaign it returned to draft answers it again.
      cancelCampaign: { camp_: f.canceledId },
      rotateKey: { key_: f.rotatedKeyId },
      revokeKey: { key_: f.revokedKeyId },
    },
    webhookUrl: `${receiverUrl}/second`,
  });

const POLICY = /^"requests";q=\d+;w=\d+$/;
const REMAINING = /^"requests";r=\d+;t=\d+$/;

function expectRateLimitFields(res: ApiResponse): void {
  expect(res.headers.get('ratelimit-policy'), JSON.stringify(res.body)).toMatch(POLICY);
  expect(res.headers.get('ratelimit')).toMatch(REMAINING);
}

let receiver: Receiver;
let receiverUrl: string;
let fixture: Fixture;

beforeAll(async () => {
  receiver = await startReceiver();
  receiverUrl = receiver.url;
  const org = await newOrganization({ smbCredits: 1_000 });
  const list = activeAccounts(uniquePrefix(), 3);
  await importAccounts(list);
  const ids = list.map((a) => a.accountId);
  const enrichedId = await createApiCampaign(api(), org.apiKey, ids);
  expect((await enrich(api(), org.apiKey, enrichedId)).status).toBe(200);
  await waitForStatus(api(), org.apiKey, enrichedId, 'enriched');
  // Canceled while its contact read is held, so the cancel cannot race the completion.
  const held = testWarehouse({ holdAccounts: true });
  useWarehouse(held);
  const canceledId = await createApiCampaign(api(), org.apiKey, ids.slice(2, 3));
  try {
    expect((await enrich(api(), org.apiKey, canceledId)).status).toBe(200);
    await held.called('getAccounts');
    const canceled = await call(api(), '/v1/campaigns/cancel', { apiKey: org.apiKey, body: { campaignId: canceledId } });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
  } finally {
    held.release();
    useWarehouse(undefined);
  }
  const draftId = await createApiCampaign(api(), org.apiKey, ids.slice(0, 1));
  const quotedId = await createApiCampaign(api(), org.apiKey, ids.slice(1, 2));
  const endpoint = await call(api(), '/v1/webhooks/create', { apiKey: org.apiKey, body: { url: `${receiverUrl}/first` } });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
  const sent = await call(api(), '/v1/webhooks/test', { apiKey: org.apiKey, body: { endpointId: endpoint.data.id } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  // Redeliver names a message once it was fanned out and attempted.
  await pollUntil(
    () => call(api(), '/v1/webhooks/deliveries', { apiKey: org.apiKey, body: {} }),
    (res) => res.status === 200 && res.data.deliveries.length > 0,
  );
  const keyIds: string[] = [];
  for (const name of ['Rotated', 'Revoked']) {
    const made = await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name, scopes: ['org:read'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    keyIds.push(made.data.key.id);
  }
  const suppression = await call(api(), '/v1/privacy/suppressions/create', {
    apiKey: org.apiKey,
    body: { identifiers: [{ type: 'contact_id', value: 'headers-lifted' }], reason: 'opt_out' },
  });
  expect(suppression.status, JSON.stringify(suppression.body)).toBe(200);
  const erasure = await call(api(), '/v1/privacy/erasures/create', {
    apiKey: org.apiKey,
    body: { identifiers: [{ type: 'contact_id', value: 'headers-read' }], regime: 'gdpr', requestRef: 'headers-read' },
  });
  expect(erasure.status, JSON.stringify(erasure.body)).toBe(200);
  fixture = {
    apiKey: org.apiKey,
    suppressionId: suppression.data.suppressions[0].id,
    erasureId: erasure.data.id,
    rotatedKeyId: keyIds[0]!,
    revokedKeyId: keyIds[1]!,
    draftId,
    quotedId,
    enrichedId,
    canceledId,
    endpointId: endpoint.data.id,
    messageId: sent.data.messageId,
    smb: async () => (await call(api(), '/v1/org/describe', { apiKey: org.apiKey })).data.credits.smb,
  };
});

afterAll(async () => {
  await receiver?.close();
});

describe('RateLimit fields on every authenticated answer (API_ROUTES)', () => {
  // The table's order is the route list's; delete comes last among the webhook operations.
  const routes = [...API_ROUTES].sort(
    (a, b) => Number(a.operation.operationId === 'deleteWebhookEndpoint') - Number(b.operation.operationId === 'deleteWebhookEndpoint'),
  );

  it.each(routes.map((route) => [route.operation.operationId, route] as const))('%s: 2xx and 4xx', async (operationId, route) => {
    const ok = await call(api(), route.operation.path, { apiKey: fixture.apiKey, body: successBody(route, fixture) });
    expect(ok.status, `${operationId}: ${JSON.stringify(ok.body)}`).toBeLessThan(300);
    expectRateLimitFields(ok);
    if (documented(route.operation).creditsRemaining) expect(Number(ok.headers.get('credits-remaining'))).toBe(await fixture.smb());
    else expect(ok.headers.get('credits-remaining')).toBeNull();

    const refused = await call(api(), route.operation.path, { apiKey: fixture.apiKey, body: { unexpected: true } });
    expect(refused.status, `${operationId}: ${JSON.stringify(refused.body)}`).toBe(400);
    expectRateLimitFields(refused);
  });
});
