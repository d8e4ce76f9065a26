/**
 * `npm start`: the product on one machine (README.md#set-up).
 *
 * Starts the local stack ({@link startLocalStack}) with its data in `.local/`
 * (kept across restarts; `--reset` wipes it), loads the demo organization on
 * first start, runs the enrichment reconciler (which resumes what a previous
 * stop interrupted) at start and every 30 s (`RECONCILE_EVERY_SECONDS`), and serves
 * the API on http://127.0.0.1:3000 (`PORT` overrides).
 *
 * A data folder serves one stack at a time: a start on a folder whose stack
 * is running exits 1 naming that stack's process and port, and leaves it be;
 * a folder left by a crashed stack is reused (infra/local/data-folder.ts).
 *
 * The port listens first; `GET /health` answers 503 with what is still
 * starting until the stack is ready for every documented use (README.md#set-up,
 * infra/local/readiness.ts), then 200, and the banner is printed at that moment.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { config } from '../../lib/config';
import { DEFAULT_DATA_DIR, writeLocalEndpoints } from './environment';
import { claimDataFolder, DataFolderInUseError, wipeDataFolder, type DataFolderClaim } from './data-folder';
import { startLocalStack, type LocalStack } from './stack';
import { Readiness } from './readiness';

const { values } = parseArgs({ options: { reset: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? process.env.DATA_DIR ?? DEFAULT_DATA_DIR);
const port = Number(process.env.PORT ?? 3000);
// Webhooks to a receiver on this machine (docs/webhooks.md); set it to false to try the AWS rules.
process.env.WEBHOOKS_ALLOW_LOCALHOST ??= 'true';

mkdirSync(dataDir, { recursive: true });
// One stack per data folder: a folder a running stack serves is refused before anything in it is touched
// (its endpoints.json, its DynamoDB Local); one left by a crashed stack is claimed again (infra/local/data-folder.ts).
let claim: DataFolderClaim;
try {
  claim = claimDataFolder(dataDir, port);
} catch (error) {
  console.error(error instanceof DataFolderInUseError ? error.message : error);
  process.exit(1);
}
if (values.reset) {
  wipeDataFolder(dataDir);
  console.log(`Wiped ${dataDir}`);
}

const secretFile = path.join(dataDir, 'cursor-secret');
if (!existsSync(secretFile)) writeFileSync(secretFile, randomBytes(32).toString('hex'));

let stack: LocalStack | undefined;
const shutdown = async (code = 0) => {
  await stack?.stop();
  rmSync(path.join(dataDir, 'endpoints.json'), { force: true });
  claim.release();
  process.exit(code);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());

try {
  // The reconciler resumes what the last stop interrupted (executions live in this process) and repairs crash windows.
  const readiness = new Readiness();
  console.log(
    `Starting the local stack on http://127.0.0.1:${port} (GET /health answers 503 with what is still starting until it is ready)…`,
  );
  stack = await startLocalStack({
    dataDir,
    cursorSecret: readFileSync(secretFile, 'utf8').trim(),
    api: { port },
    reconcileEverySeconds: config.localReconcileEverySeconds,
    readiness,
  });
  const apiUrl = stack.api!.url;
  claim.setPort(Number(new URL(apiUrl).port));
  writeLocalEndpoints(dataDir, stack.endpoints);
  readiness.done('endpoints.json');

  const { seedDemo } = await import('./seed');
  const demo = await seedDemo(dataDir);
  stack.api!.serveDemoApiKey(demo.apiKey, demo.testApiKey);
  readiness.done('demo data');
  // What each step took (the readiness bench module reads this line: README.md#set-up's 15 s on restart).
  console.log(readiness.summary);

  const auth = `-H 'Authorization: Bearer ${demo.apiKey}'`;
  console.log(`
Campaign Enrichment API is running at ${apiUrl}
  data folder   ${dataDir}  (npm run reset wipes it)
  API docs      ${apiUrl}/docs   (OpenAPI: ${apiUrl}/openapi.json)
  health        ${apiUrl}/health

Demo organization "${demo.organizationName}" (${demo.organizationId}), ${demo.warehouseAccounts} warehouse accounts acc_00001…
  API key       ${demo.apiKey}   (also: curl -s ${apiUrl}/local/demo-key)
  test key      ${demo.testApiKey}   (also: curl -s ${apiUrl}/local/test-key)
                test mode: its own campaigns and 1,000,000 test credits; account IDs test_found_1, test_nocontacts_1,
                test_closed_1, test_crm_1, test_recent_1, test_fail_1… decide the outcome (docs/test-mode.md)

Try it:
  curl -s -X POST ${apiUrl}/v1/org/describe ${auth}
  curl -s -X POST ${apiUrl}/v1/campaigns/create ${auth} -F name=Demo -F accountIds=acc_00001 -F accountIds=acc_00002 -F accountIds=acc_00003
  curl -s -X POST ${apiUrl}/v1/campaigns/create -H 'Authorization: Bearer ${demo.testApiKey}' -F name=Test -F accountIds=test_found_1 -F accountIds=test_nocontacts_1

Press Ctrl+C to stop.`);
} catch (error) {
  console.error('The local stack failed to start:', error);
  await shutdown(1);
}
