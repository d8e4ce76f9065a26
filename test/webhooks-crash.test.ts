/**
 * Crash safety of webhooks (docs/webhooks.md): the event is written in the same
 * transaction as the state change, so a process killed after the change and
 * before the delivery still delivers it once restarted.
 *
 * This runs the real `npm start` as a child process (its own DynamoDB Local
 * and data folder), kills its whole process group with SIGKILL while the
 * first attempt of the `campaign.enriched` message is in flight (the receiver
 * holds the request unanswered), starts `npm start` again on the same data
 * folder, and waits for the message to arrive with the same `webhook-id`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../infra/local/emulators';
import { call } from './support/api';
import { pollUntil } from './enrichment/support';
import { startReceiver, webhookHeaders } from './webhooks/receiver';
import { SPAWNED_READY_MS, SPAWNED_RUN_MS, spawnedTestTimeout } from './support/spawned';
import { fillWithDemoData, stackDataFolder, stackEnvironment } from './support/data-folder';

const ROOT = path.resolve(import.meta.dirname, '..');
const dataDir = stackDataFolder('cea-webhook-crash-');
const running = new Set<ChildProcess>();

/** Environment of a fresh `npm start`: none of this test worker's local-stack variables. */
function childEnvironment(port: number): NodeJS.ProcessEnv {
  return { ...stackEnvironment(), PORT: String(port), WEBHOOKS_ALLOW_LOCALHOST: 'true', WEBHOOK_RETRY_BASE_SECONDS: '0.2' };
}

/** Starts `npm start` in its own process group; resolves with its API URL and the demo API key once it serves. */
async function startProcess(): Promise<{ child: ChildProcess; url: string; apiKey: string }> {
  const port = await freePort();
  const child = spawn('npm', ['start', '--', '--data-dir', dataDir], {
    cwd: ROOT,
    env: childEnvironment(port),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const apiKey = await pollUntil(
    async () => /API key\s+(cek_\w+)/.exec(output)?.[1],
    (key) => key !== undefined || child.exitCode !== null,
    // Under a full parallel test run a start (JVM, tsx) can take minutes.
    { timeoutMs: SPAWNED_READY_MS, intervalMs: 200 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}\nnpm start printed:\n${output.slice(-4_000)}`);
  });
  if (!apiKey) throw new Error(`npm start exited: ${output}`);
  return { child, url: `http://127.0.0.1:${port}`, apiKey };
}

/** SIGKILL to the process group: npm, tsx, the API and its DynamoDB Local, all at once, no shutdown code run. */
async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
  await exited;
}

afterAll(async () => {
  for (const child of running) await kill(child, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('webhooks survive a crash', () => {
  it(
    'delivers campaign.enriched after the process is killed between the state change and the delivery, with the same webhook-id',
    { timeout: spawnedTestTimeout({ starts: 3, runs: 2 }) }, // a third: the run's demo data folder, if this test builds it
    async () => {
      // The demo organization and warehouse already in the folder, as after any earlier start: this test is about the restart.
      await fillWithDemoData(dataDir);
      const hook = await startReceiver(['hang', { status: 200, body: 'ok' }]);
      try {
        const first = await startProcess();
        const endpoint = await call(first.url, '/v1/webhooks/create', {
          apiKey: first.apiKey,
          body: { url: hook.url, events: ['campaign.enriched'] },
        });
        expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
        const created = await call(first.url, '/v1/campaigns/create', {
          apiKey: first.apiKey,
          body: { name: 'Crash', accountIds: ['acc_00001', 'acc_00002', 'acc_00003'] },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        expect(
          (await call(first.url, '/v1/campaigns/enrich', { apiKey: first.apiKey, body: { campaignId: created.data.id } })).status,
        ).toBe(200);

        // The first attempt is in flight and will never be answered: the campaign is enriched, nothing is delivered.
        const [inFlight] = await hook.received(1, SPAWNED_RUN_MS);
        await kill(first.child, 'SIGKILL');

        const second = await startProcess();
        const enriched = await pollUntil(
          () => call(second.url, '/v1/campaigns/get', { apiKey: second.apiKey, body: { campaignId: created.data.id } }),
          (res) => res.status === 200,
        );
        expect(enriched.data.status).toBe('enriched');
        // The restarted process finds the undelivered message and sends it again once the dead attempt's lease ends.
        const [, delivered] = await hook.received(2, SPAWNED_RUN_MS);
        expect(delivered!.headers['webhook-id']).toBe(inFlight!.headers['webhook-id']);
        expect(delivered!.body).toBe(inFlight!.body);
        expect(() => new Webhook(endpoint.data.secret).verify(delivered!.body, webhookHeaders(delivered!))).not.toThrow();
        expect(JSON.parse(delivered!.body)).toMatchObject({
          type: 'campaign.enriched',
          timestamp: enriched.data.completedAt,
          data: { campaign: { id: created.data.id, status: 'enriched' } },
        });

        // The cut attempt left no record; the one that got through is attempt 1 of the message.
        const log = await pollUntil(
          () => call(second.url, '/v1/webhooks/deliveries', { apiKey: second.apiKey, body: {} }),
          (res) => res.status === 200 && res.data.deliveries.length === 1,
        );
        expect(log.data.deliveries[0]).toMatchObject({
          messageId: inFlight!.headers['webhook-id'],
          attempt: 1,
          status: 'succeeded',
          responseStatus: 200,
          eventType: 'campaign.enriched',
        });
        await kill(second.child, 'SIGTERM');
      } finally {
        await hook.close();
      }
    },
  );
});
