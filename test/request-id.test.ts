/**
 * Request tracing (docs/idempotency.md), through HTTP against the local stack:
 * every response of every operation, error path, route and document carries
 * `X-Request-Id`; the request's log lines carry the same ID; an enrich call
 * passes it into the workflow execution it starts, whose task log lines
 * carry it too.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { call, newOrganization, useApi } from './support/api';
import { API_ROUTES } from '../infra/routes';
import { toApiGatewayEvent } from '../infra/local/server';
import { lambdaContext } from '../infra/local/lambda-context';
import { logger } from '../lib/observability';
import { campaigns, createTaskHandler } from '../lib/root';
import { sfn } from '../lib/aws';
import { activeAccounts, createApiCampaign, ENRICH, importAccounts, pollUntil, uniquePrefix, waitForStatus } from './enrichment/support';

// This file reads the log lines, so the logger (built at import) logs at DEBUG here;
// Powertools restores its initial level at every invocation, so a later setLogLevel would not hold.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
});

const api = useApi();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Captures (and keeps off the terminal) the JSON log lines the process writes; Powertools writes them to stdout and stderr. */
function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const tap = (original: typeof process.stdout.write) =>
    function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      let others = '';
      for (const line of String(chunk).split('\n')) {
        try {
          const parsed = line.startsWith('{"level"') ? (JSON.parse(line) as Record<string, unknown>) : undefined;
          if (parsed) {
            lines.push(parsed);
            continue;
          }
        } catch {
          // not a log line
        }
        if (line !== '') others += `${line}\n`;
      }
      return others === '' ? true : (original as (...args: unknown[]) => boolean).call(this, others, ...rest);
    } as typeof process.stdout.write;
  process.stdout.write = tap(originals.out);
  process.stderr.write = tap(originals.err);
  return {
    lines,
    /** Lines written from now on, until `take` is called. */
    take(): Record<string, unknown>[] {
      return lines.splice(0);
    },
    restore() {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    },
  };
}

describe('X-Request-Id', () => {
  it('answers every operation with X-Request-Id: success, 400, 401, and a fresh ID each time', async () => {
    const { apiKey } = await newOrganization();
    const campaignId = await createApiCampaign(api(), apiKey, ['acc_1']);
    const valid: Record<string, unknown> = {
      describeOrganization: undefined,
      createCampaign: { name: 'Traced', accountIds: ['acc_1'] },
      updateCampaign: { campaignId, name: 'Renamed' },
      getCampaign: { campaignId },
      listCampaigns: { limit: 5 },
      enrichCampaign: { campaignId },
      exportCampaign: { campaignId },
    };
    const seen = new Set<string>();
    for (const route of API_ROUTES) {
      const { operationId, path } = route.operation;
      const responses = [
        await call(api(), path, { apiKey, body: valid[operationId] }),
        await call(api(), path, { apiKey, body: { unknownField: 1 } }),
        await call(api(), path, { body: valid[operationId] }),
      ];
      expect(responses.map((r) => r.status).slice(1), operationId).toEqual([400, 401]);
      // export of a draft is a business error (409 results_not_ready); enrich of an account-less draft, 422.
      expect(responses[0]!.status, `${operationId} ${JSON.stringify(responses[0]!.body)}`).toBeLessThan(500);
      for (const res of responses) {
        const id = res.headers.get('x-request-id');
        expect(id, operationId).toMatch(UUID);
        expect(seen.has(id!), operationId).toBe(false);
        seen.add(id!);
      }
    }
  });

  it('answers 404, 405, /openapi.json, /docs, /health and an oversized body with X-Request-Id', async () => {
    const responses = await Promise.all([
      fetch(`${api()}/v1/nope`, { method: 'POST' }),
      fetch(`${api()}/v1/org/describe`, { method: 'GET' }),
      fetch(`${api()}/v1/campaigns/list`, { method: 'DELETE' }),
      fetch(`${api()}/openapi.json`),
      fetch(`${api()}/docs`),
      fetch(`${api()}/health`),
      fetch(`${api()}/v1/org/describe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.alloc(12 * 1024 * 1024, 32),
      }),
    ]);
    expect(responses.map((r) => r.status)).toEqual([404, 405, 405, 200, 200, 200, 400]);
    for (const response of responses) expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(new Set(responses.map((r) => r.headers.get('x-request-id'))).size).toBe(responses.length);
  });

  it('answers a 500 with X-Request-Id (a failing warehouse during enrich)', async () => {
    const { useWarehouse, embeddedWarehouse } = await import('../lib/root');
    const { apiKey } = await newOrganization();
    const accounts = activeAccounts(uniquePrefix(), 2);
    await importAccounts(accounts);
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      accounts.map((a) => a.accountId),
    );
    const inner = embeddedWarehouse();
    useWarehouse({
      getAccountStatuses: async () => Promise.reject(new Error('Injected outage')),
      getAccounts: (ids) => inner.getAccounts(ids),
    });
    try {
      const res = await call(api(), ENRICH, { apiKey, body: { campaignId } });
      expect(res.status).toBe(500);
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    } finally {
      useWarehouse(undefined);
    }
  });

  it('is API Gateway’s requestContext.requestId, as each function receives it', async () => {
    const { handler } = await import('../functions/org-describe');
    const requestId = `Ab${randomUUID()}`;
    const event = toApiGatewayEvent(
      { rawHeaders: [], url: '/v1/org/describe', method: 'POST', httpVersion: '1.1', socket: {} } as never,
      Buffer.alloc(0),
      'POST /v1/org/describe',
      requestId,
    );
    const response = await handler(event, lambdaContext('OrgDescribe', randomUUID()));
    expect(response.statusCode).toBe(401);
    expect(response.headers?.['x-request-id']).toBe(requestId);
  });
});

let logs: ReturnType<typeof captureLogs>;
beforeAll(() => {
  logs = captureLogs();
});
afterAll(() => logs.restore());

describe('the request ID in logs', () => {
  it('logs at DEBUG in this file', () => {
    expect(logger.getLevelName()).toBe('DEBUG');
  });

  it('is on every log line of the request, whose closing line names the outcome', async () => {
    const { apiKey, organizationId } = await newOrganization();
    const key = randomUUID();
    const requests = [
      () => call(api(), '/v1/org/describe', { apiKey }),
      () => call(api(), '/v1/campaigns/create', { apiKey, body: { name: ' ' } }),
      () =>
        call(api(), '/v1/campaigns/create', { apiKey, headers: { 'idempotency-key': key }, body: { name: 'Logged', accountIds: ['a'] } }),
      () =>
        call(api(), '/v1/campaigns/create', { apiKey, headers: { 'idempotency-key': key }, body: { name: 'Logged', accountIds: ['a'] } }),
      () => call(api(), '/v1/org/describe', {}),
    ];
    const expected = [
      { statusCode: 200, organizationId },
      { statusCode: 400, errorCode: 'invalid_request', organizationId },
      { statusCode: 200, organizationId, idempotencyKey: key },
      { statusCode: 200, organizationId, idempotencyKey: key },
      { statusCode: 401, errorCode: 'invalid_api_key' },
    ];
    logs.take();
    for (const [i, request] of requests.entries()) {
      const res = await request();
      const requestId = res.headers.get('x-request-id');
      const lines = logs.take();
      expect(lines.length, `request ${i}`).toBeGreaterThan(0);
      for (const line of lines) expect(line.requestId, JSON.stringify(line)).toBe(requestId);
      const closing = lines.filter((line) => line.message === 'Request completed');
      expect(closing, `request ${i}`).toHaveLength(1);
      expect(closing[0]).toMatchObject({ ...expected[i], level: 'INFO', service: 'campaign-enrichment-api' });
      expect(closing[0]!.durationMs).toEqual(expect.any(Number));
    }
  });

  it('goes into the workflow execution an enrich call starts, and onto its tasks’ log lines', async () => {
    const { apiKey, organizationId } = await newOrganization();
    const accounts = activeAccounts(uniquePrefix(), 3);
    await importAccounts(accounts);
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      accounts.map((a) => a.accountId),
    );
    const res = await call(api(), ENRICH, { apiKey, body: { campaignId } });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    await waitForStatus(api(), apiKey, campaignId, 'enriched');

    const attempt = (await campaigns().get(organizationId, campaignId))!.attempt!;
    expect(attempt.requestId).toBe(requestId);
    const execution = await sfn().send(new DescribeExecutionCommand({ executionArn: attempt.executionArn }));
    expect(JSON.parse(execution.input!)).toMatchObject({ organizationId, campaignId, attemptId: attempt.id, requestId });

    // Recording runs on after the campaign reads enriched: wait for its line too.
    const tasks = ['WorkflowFindContacts', 'WorkflowComplete', 'WorkflowFinishRecording'];
    const taskLines = await pollUntil(
      async () => logs.lines.filter((line) => line.message === 'Workflow task completed' && line.campaignId === campaignId),
      (lines) => tasks.every((name) => lines.some((line) => line.function_name === name)),
    );
    for (const line of taskLines) expect(line).toMatchObject({ requestId, attemptId: attempt.id, organizationId });
  });

  it("keeps a workflow task's keys on its own invocation's lines, a failed invocation's too", async () => {
    type Input = { organizationId?: string; campaignId?: string; attemptId?: string; requestId?: string };
    const failing = createTaskHandler(async (_input: Input) => {
      throw new Error('planned failure');
    });
    const probe = randomUUID();
    const logging = createTaskHandler(async (input: Input) => {
      logger.info('Task line', { probe });
      return input.campaignId;
    });
    const first = { organizationId: 'org_first', campaignId: 'camp_first', attemptId: 'att_first', requestId: randomUUID() };
    await expect(failing(first, lambdaContext('WorkflowComplete', randomUUID(), 60_000))).rejects.toThrow('planned failure');
    const secondRequest = randomUUID();
    expect(await logging({ campaignId: 'camp_second' }, lambdaContext('WorkflowExpire', secondRequest, 60_000))).toBe('camp_second');
    const line = logs.lines.find((l) => l.probe === probe);
    // The invocation's Lambda context and its own keys; nothing of the failed invocation before it.
    expect(line).toMatchObject({ campaignId: 'camp_second', function_name: 'WorkflowExpire', function_request_id: secondRequest });
    for (const key of ['organizationId', 'attemptId', 'requestId']) expect(line).not.toHaveProperty(key);
  });
});
