/**
 * Figure "pipeline overhead": what the middy stack, the schema and the
 * envelope cost per request, without any I/O.
 *
 * The handler is built by the product's own `createApiHandler`
 * (lib/http/pipeline.ts) around an in-memory use case that returns a fixed
 * campaign, with the get operation's schema. Authentication is part of the
 * pipeline and reads the API key from DynamoDB; to keep the figure free of
 * I/O that one GetItem is answered in-process by a middleware at the SDK's
 * initialize step (no serialization, no HTTP), so everything else the
 * pipeline does runs for real: logger context, header parsing and key
 * hashing, body guard, JSON parser, form step, zod validation, envelope.
 *
 * Two informative rows put it in context: the same handler with the real
 * GetItem against DynamoDB Local, and that bare GetItem alone.
 */
import { Bench } from 'tinybench';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createApiHandler } from '../../lib/http/pipeline';
import { getCampaignOperation } from '../../lib/campaigns/schema';
import { toCampaign, type CampaignRecord } from '../../lib/campaigns/model';
import { apiKeys, organizations } from '../../lib/root';
import { dynamodb } from '../../lib/aws';
import * as keys from '../../lib/db/keys';
import { hashApiKey } from '../../lib/ids';
import { lambdaContext } from '../../infra/local/lambda-context';
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { round } from '../lib/stats';
import { apiGatewayEvent } from '../../infra/local/event';

const event = (apiKey: string, body: string) =>
  apiGatewayEvent({
    method: 'POST',
    url: '/v1/campaigns/get',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', host: '127.0.0.1', 'user-agent': 'bench' },
    body: Buffer.from(body),
    requestId: 'bench',
  });

const BUDGET_MS = 0.2;

/** A campaign record as the get use case would return it. */
function fixedCampaign(organizationId: string): CampaignRecord {
  return {
    id: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
    organizationId,
    name: 'Q4 expansion targets',
    status: 'draft',
    createdVia: 'api',
    excludeEnrichedWithinDays: 30,
    createdAt: '2026-11-22T10:00:00.000Z',
    accountsRequested: 300,
    accountsObjectKey: 'campaigns/x/accounts.txt',
    accountsEligible: null,
    accountsExcluded: null,
    creditsCharged: 0,
    lastEnrichment: null,
  };
}

export async function runPipeline(results: Results, stack: BenchStack, options: { timeMs: number }): Promise<void> {
  const group = 'pipeline overhead';
  const { organization, apiKey } = await organizations().create({ name: 'Bench pipeline', smbCredits: 10, maxEnrichingAccounts: 10 });
  const record = fixedCampaign(organization.id);
  const handler = createApiHandler(getCampaignOperation, async () => toCampaign(record, 10), {
    findApiKey: (keyHash) => apiKeys().findByHash(keyHash),
  });
  const context = lambdaContext('BenchPipeline', 'bench');
  const body = JSON.stringify({ campaignId: record.id });

  // Sanity: the in-memory handler answers 200 with the campaign.
  stack.stubApiKeys({ organizationId: organization.id });
  const check = await handler(event(apiKey, body), context);
  if (check.statusCode !== 200) throw new Error(`The in-memory handler answered ${check.statusCode}: ${check.body}`);

  const bench = new Bench({ time: options.timeMs, warmupTime: Math.min(500, options.timeMs / 2), retainSamples: false });
  bench.add('pipeline, in-memory use case, API-key read stubbed', async () => {
    await handler(event(apiKey, body), context);
  });
  await bench.run();
  stack.stubApiKeys(undefined);

  const real = new Bench({ time: options.timeMs, warmupTime: Math.min(500, options.timeMs / 2), retainSamples: false });
  const getKey = new GetItemCommand({
    TableName: stack.tableName,
    Key: { pk: { S: keys.apiKey(hashApiKey(apiKey)).pk }, sk: { S: 'APIKEY' } },
    ConsistentRead: true,
  });
  real.add('pipeline, in-memory use case, real API-key GetItem', async () => {
    await handler(event(apiKey, body), context);
  });
  real.add('bare GetItem (same client, same DynamoDB Local)', async () => {
    await dynamodb.send(getKey);
  });
  await real.run();

  const [stubbed] = bench.tasks;
  const [withRead, bare] = real.tasks;
  const latency = (task: (typeof bench.tasks)[number] | undefined) => {
    const result = task?.result;
    if (!result || !('latency' in result)) throw new Error(`Task ${task?.name} did not complete: ${JSON.stringify(result)}`);
    return result.latency;
  };
  const s = latency(stubbed);
  const r = latency(withRead);
  const b = latency(bare);
  results.add({
    group,
    name: 'middy stack + auth code + schema + envelope, no I/O (p50)',
    value: s.p50,
    unit: 'ms',
    budget: { op: '<=', limit: BUDGET_MS, text: `≤ ${BUDGET_MS} ms p50` },
    extra: { p99: `${round(s.p99, 3)} ms`, mean: `${round(s.mean, 3)} ms`, samples: s.samplesCount },
  });
  results.add({
    group,
    name: 'same, with the real API-key GetItem (p50)',
    value: r.p50,
    unit: 'ms',
    floor: { value: b.p50, unit: 'ms', what: 'bare GetItem p50' },
    extra: { p99: `${round(r.p99, 3)} ms`, 'minus floor': `${round(r.p50 - b.p50, 3)} ms`, samples: r.samplesCount },
    note: 'reported only',
  });
  results.note(
    group,
    'The handler is `createApiHandler(getCampaignOperation, inMemoryUseCase)` from lib/http/pipeline.ts invoked directly (tinybench, ' +
      `${options.timeMs} ms per task) with a synthesized API Gateway v2 event (JSON body, Bearer key). Authentication runs its real code ` +
      '(header parsing, key pattern, SHA-256) but its one DynamoDB GetItem is answered in-process by a middleware at the SDK initialize ' +
      'step, so the budgeted figure has no I/O; the second row keeps that GetItem real and shows the bare GetItem beside it.',
  );
}
