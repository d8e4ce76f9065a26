/**
 * `npm start`: the product on one machine (decisions §9).
 *
 * Starts DynamoDB Local and s3rver with their data in `.local/` (kept across
 * restarts; `--reset` wipes it), creates the table and bucket, loads the demo
 * organization on first start, then serves the API on http://127.0.0.1:3000
 * (`PORT` overrides).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startDynamoDbLocal, startS3Local, type RunningEmulator } from './emulators';
import { applyLocalEnvironment, DEFAULT_DATA_DIR, writeLocalEndpoints, type LocalEndpoints } from './environment';
import { LOCAL_STATE_MACHINE_ARN } from './step-functions';

const { values } = parseArgs({ options: { reset: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? process.env.DATA_DIR ?? DEFAULT_DATA_DIR);
const port = Number(process.env.PORT ?? 3000);

if (values.reset && existsSync(dataDir)) {
  rmSync(dataDir, { recursive: true, force: true });
  console.log(`Wiped ${dataDir}`);
}
mkdirSync(dataDir, { recursive: true });

const secretFile = path.join(dataDir, 'cursor-secret');
if (!existsSync(secretFile)) writeFileSync(secretFile, randomBytes(32).toString('hex'));

const emulators: RunningEmulator[] = [];
const shutdown = async (code = 0) => {
  await Promise.allSettled(emulators.map((e) => e.stop()));
  rmSync(path.join(dataDir, 'endpoints.json'), { force: true });
  process.exit(code);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());

try {
  const dynamodbLocal = await startDynamoDbLocal({ dataDir: path.join(dataDir, 'dynamodb') });
  emulators.push(dynamodbLocal);
  const bucketName = 'campaign-enrichment-local';
  const s3Local = await startS3Local({ dataDir: path.join(dataDir, 's3'), buckets: [bucketName] });
  emulators.push(s3Local);

  const endpoints: LocalEndpoints = {
    dynamodbEndpoint: dynamodbLocal.endpoint,
    s3Endpoint: s3Local.endpoint,
    tableName: 'campaign-enrichment',
    bucketName,
    cursorSecret: readFileSync(secretFile, 'utf8').trim(),
    // The local Step Functions endpoint shares the API's port.
    sfnEndpoint: `http://127.0.0.1:${port}`,
    stateMachineArn: LOCAL_STATE_MACHINE_ARN,
  };
  applyLocalEnvironment(endpoints);

  // Modules that build AWS clients are loaded once the environment points at the emulators.
  const { dynamodb, s3 } = await import('../../lib/aws');
  const { ensureTable, ensureBucket } = await import('./table');
  const { seedDemo } = await import('./seed');
  const { startApiServer } = await import('./server');
  const { createLocalStepFunctions } = await import('./step-functions');
  const { DescribeTableCommand } = await import('@aws-sdk/client-dynamodb');
  const { HeadBucketCommand } = await import('@aws-sdk/client-s3');

  await ensureTable(dynamodb, endpoints.tableName);
  await ensureBucket(s3, endpoints.bucketName);
  const demo = await seedDemo(dataDir);

  const stepFunctions = await createLocalStepFunctions();
  const api = await startApiServer({
    port,
    stepFunctions,
    demoApiKey: demo.apiKey,
    healthCheck: async () => {
      await dynamodb.send(new DescribeTableCommand({ TableName: endpoints.tableName }));
      await s3.send(new HeadBucketCommand({ Bucket: endpoints.bucketName }));
    },
  });
  writeLocalEndpoints(dataDir, { ...endpoints, apiUrl: api.url });
  const { resumeInterruptedEnrichments } = await import('./recover');
  const { ddb } = await import('../../lib/aws');
  const { workflow } = await import('../../lib/stores');
  const resumed = await resumeInterruptedEnrichments(ddb, endpoints.tableName, workflow());
  if (resumed > 0) console.log(`Resumed ${resumed} enrichment(s) interrupted by the last stop.`);

  const auth = `-H 'Authorization: Bearer ${demo.apiKey}'`;
  console.log(`
Campaign Enrichment API is running at ${api.url}
  data folder   ${dataDir}  (npm run reset wipes it)
  API docs      ${api.url}/docs   (OpenAPI: ${api.url}/openapi.json)
  health        ${api.url}/health

Demo organization "${demo.organizationName}" (${demo.organizationId}), ${demo.warehouseAccounts} warehouse accounts acc_00001…
  API key       ${demo.apiKey}   (also: curl -s ${api.url}/local/demo-key)

Try it:
  curl -s -X POST ${api.url}/v1/org/describe ${auth}
  curl -s -X POST ${api.url}/v1/campaigns/create ${auth} -F name=Demo -F accountIds=acc_00001 -F accountIds=acc_00002 -F accountIds=acc_00003

Press Ctrl+C to stop.`);
} catch (error) {
  console.error('The local stack failed to start:', error);
  await shutdown(1);
}
