/**
 * The deployed bundles, not the sources: a function bundled with the stack's
 * own options (BUNDLING of infra/constructs/service-function.ts, translated by
 * bench/lib/bundle.ts) runs in a Node process of its own against DynamoDB
 * Local, and finds its credentials in the environment only, as in Lambda
 * (issue #18: the SDK's default chain is aliased to lib/lambda/env-credentials.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { CDK_BUNDLE_OPTIONS, PROJECT_ROOT } from '../../bench/lib/bundle';
import { FUNCTIONS } from '../../bench/figures/bundles';
import { API_ROUTES } from '../../infra/routes';
import { CREDENTIAL_PROVIDER_PACKAGE, ENV_CREDENTIALS_MODULE } from '../../infra/constructs/service-function';
import { apiGatewayEvent } from '../../infra/local/event';
import { call, newOrganization, useApi } from '../support/api';
import { createApiHandler } from '../../lib/http/pipeline';
import { createCampaignOperation } from '../../lib/campaigns/schema';

const run = promisify(execFile);
const baseUrl = useApi();

/** Imports `bundle` in a fresh process with `env` and invokes its handler once with `event`; resolves to the response. */
async function invokeBundle(
  bundle: string,
  event: unknown,
  env: NodeJS.ProcessEnv,
): Promise<{ statusCode: number; body: string; headers?: Record<string, string>; logs: string }> {
  const context = `{ awsRequestId: 'bundle-test', functionName: 'BundleTest', getRemainingTimeInMillis: () => 28000 }`;
  const script = `const { handler } = await import(${JSON.stringify(`file://${bundle}`)}); console.log(JSON.stringify(await handler(${JSON.stringify(event)}, ${context})));`;
  const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { env, cwd: path.dirname(bundle) });
  const lines = stdout.trim().split('\n');
  return { ...JSON.parse(lines.at(-1)!), logs: [...lines.slice(0, -1), stderr].join('\n') };
}

describe('a function bundled as the stack deploys it', () => {
  let dir: string;
  let bundle: string;
  let metafile: Metafile;
  /** The worker's environment (pointed at the emulators) with an empty home: no ~/.aws files to fall back on. */
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'bundle-test-'));
    bundle = path.join(dir, 'index.mjs');
    ({ metafile } = await build({
      ...CDK_BUNDLE_OPTIONS,
      absWorkingDir: PROJECT_ROOT,
      entryPoints: [path.join(PROJECT_ROOT, 'functions/org-describe.ts')],
      outfile: bundle,
      metafile: true,
    }));
    env = {
      ...process.env,
      HOME: dir,
      AWS_CONFIG_FILE: path.join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
      NODE_OPTIONS: '',
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('carries only the environment credential provider, and no S3, Step Functions, presigner, endpoint-cache or event-stream code (DynamoDB-only function)', () => {
    const inputs = Object.keys(Object.values(metafile.outputs).find((output) => output.entryPoint)!.inputs);
    expect(inputs.some((file) => file.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
    // Nor the documentation of any operation (response shapes, examples: lib/<domain>/docs.ts, read by the OpenAPI document only).
    expect(inputs.filter((file) => /lib\/[a-z]+\/docs\.ts$/.test(file) || file.includes('zod-openapi/'))).toEqual([]);
    for (const absent of [
      '@aws-sdk/credential-provider-node/',
      '@aws-sdk/credential-provider-ini/',
      '@aws-sdk/nested-clients/',
      '@aws-sdk/client-s3/',
      '@aws-sdk/client-sfn/',
      '@aws-sdk/s3-request-presigner/',
      '@aws-sdk/endpoint-cache/',
      'mnemonist/',
      '@smithy/core/dist-es/submodules/event-streams/',
    ]) {
      expect(
        inputs.filter((file) => file.includes(absent)),
        absent,
      ).toEqual([]);
    }
    expect(readFileSync(bundle, 'utf8')).not.toMatch(/sourceMappingURL/);
  });

  it('does not load undici (Node fetch) at import: node:http is required, not imported as an ES module (lib/lambda/node-http.ts)', async () => {
    expect(readFileSync(bundle, 'utf8')).not.toMatch(/from\s*"(node:)?http"/);
    const script = `await import(${JSON.stringify(`file://${bundle}`)}); console.log(process.moduleLoadList.filter((m) => m.includes('undici')).length);`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env, cwd: dir });
    expect(stdout.trim().split('\n').at(-1)).toBe('0');
  });

  it('answers describe against DynamoDB Local with the credentials of the environment', async () => {
    const { organizationId, apiKey } = await newOrganization({ name: 'Bundled Co', smbCredits: 42 });
    const event = apiGatewayEvent({
      method: 'POST',
      url: '/v1/org/describe',
      headers: { authorization: `Bearer ${apiKey}` },
      requestId: 'bundle-test-1',
    });
    const response = await invokeBundle(bundle, event, env);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).data.organization).toEqual({ id: organizationId, name: 'Bundled Co' });
  });

  it('has no other credential source: without AWS_ACCESS_KEY_ID the call fails (500 internal_error)', async () => {
    const { apiKey } = await newOrganization();
    const event = apiGatewayEvent({
      method: 'POST',
      url: '/v1/org/describe',
      headers: { authorization: `Bearer ${apiKey}` },
      requestId: 'bundle-test-2',
    });
    const { AWS_ACCESS_KEY_ID: _omitted, ...withoutKey } = env;
    const response = await invokeBundle(bundle, event, { ...withoutKey, POWERTOOLS_LOG_LEVEL: 'ERROR' });
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body).error.code).toBe('internal_error');
    expect(response.logs).toContain('Unable to find environment variable credentials');
  });
});

/**
 * Every function of the stack (API routes, the MCP server, the workflow tasks) bundled in one esbuild run with
 * `options`; resolves to the files each function's bundle holds, by function name. Nothing is written.
 */
async function inputsOfEveryFunction(options: BuildOptions): Promise<Map<string, string[]>> {
  const { metafile } = await build({
    ...options,
    absWorkingDir: PROJECT_ROOT,
    entryPoints: FUNCTIONS.map((fn) => ({ in: path.join(PROJECT_ROOT, fn.entry), out: fn.name })),
    outdir: path.join(tmpdir(), 'bundle-test-all'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const byName = new Map<string, string[]>();
  for (const [file, output] of Object.entries(metafile.outputs))
    if (output.entryPoint) byName.set(path.basename(file, path.extname(file)), Object.keys(output.inputs));
  return byName;
}

/** Packages of the SDK's default credential chain beyond the environment provider (what Lambda never needs). */
const DEFAULT_CHAIN =
  /@aws-sdk\/(credential-provider-(node|ini|sso|process|web-identity|http|login)|nested-clients|token-providers)\/|@smithy\/credential-provider-imds\//;
/** The functions whose bundle holds a file of the default chain. */
const withDefaultChain = (inputs: Map<string, string[]>) =>
  [...inputs].filter(([, files]) => files.some((file) => DEFAULT_CHAIN.test(file))).map(([name]) => name);

describe('every deployed bundle', () => {
  let deployed: Map<string, string[]>;
  beforeAll(async () => {
    deployed = await inputsOfEveryFunction(CDK_BUNDLE_OPTIONS);
  });

  it('takes AWS credentials from the environment only: none holds the default chain, and the check finds it when the alias is off', async () => {
    // Lambda sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN from the execution role
    // (docs/deploy.md "Credentials of the functions"): the bundles alias the chain to lib/lambda/env-credentials.ts.
    expect(deployed.size).toBe(FUNCTIONS.length);
    expect(withDefaultChain(deployed)).toEqual([]);
    const withSdk = [...deployed].filter(([, files]) => files.some((file) => file.includes('@aws-sdk/core/')));
    expect(withSdk.length).toBeGreaterThan(0);
    for (const [name, files] of withSdk)
      expect(
        files.some((file) => file.includes('@aws-sdk/credential-provider-env/')),
        name,
      ).toBe(true);
    // The same check against the SDK's own default chain (the stack's aliases left out) names every SDK user.
    const { [CREDENTIAL_PROVIDER_PACKAGE]: chain, ...otherAliases } = CDK_BUNDLE_OPTIONS.alias ?? {};
    expect(chain).toBe(`./${ENV_CREDENTIALS_MODULE}`);
    const naive = await inputsOfEveryFunction({ ...CDK_BUNDLE_OPTIONS, alias: otherAliases });
    expect(withDefaultChain(naive).sort()).toEqual(withSdk.map(([name]) => name).sort());
  });

  it('a jsonOnly operation carries no form parser (busboy), an operation that takes forms does (lib/http/pipeline.ts createJsonApiHandler)', () => {
    const busboy = (name: string) => deployed.get(name)!.some((file) => file.includes('@fastify/busboy/'));
    const jsonOnly = API_ROUTES.filter((route) => route.operation.jsonOnly);
    expect(jsonOnly.length).toBeGreaterThan(0);
    for (const route of API_ROUTES) expect(busboy(route.functionId), route.functionId).toBe(!route.operation.jsonOnly);
  });
});

/** Bundles `entry` with the stack's options into a fresh folder; returns the bundle's path and the files it holds. */
async function bundleOf(entry: string, dir: string): Promise<{ file: string; inputs: string[] }> {
  const file = path.join(dir, path.basename(entry, '.ts'), 'index.mjs');
  const { metafile } = await build({
    ...CDK_BUNDLE_OPTIONS,
    absWorkingDir: PROJECT_ROOT,
    entryPoints: [path.join(PROJECT_ROOT, entry)],
    outfile: file,
    metafile: true,
  });
  return { file, inputs: Object.keys(Object.values(metafile.outputs).find((output) => output.entryPoint)!.inputs) };
}

const jsonRequest = (
  url: string,
  apiKey: string,
  body: unknown,
  headers: Record<string, string> = {},
  requestId = `bundle-${Math.random()}`,
) =>
  apiGatewayEvent({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: Buffer.from(JSON.stringify(body)),
    requestId,
  });

/**
 * Bundles whose unused imports esbuild drops (`"sideEffects": false` in
 * package.json, issue #18): the code a function keeps must still run.
 */
describe('other bundles as the stack deploys them', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'bundle-test-'));
    env = {
      ...process.env,
      HOME: dir,
      AWS_CONFIG_FILE: path.join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
      NODE_OPTIONS: '',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('webhooks/list carries neither the URL check nor delivery signing (standardwebhooks) nor idempotency code (a read operation), and answers', async () => {
    const { file, inputs } = await bundleOf('functions/webhooks-list.ts', dir);
    for (const absent of ['standardwebhooks/', 'lib/webhooks/ssrf.ts', 'lib/idempotency/', 'canonicalize/'])
      expect(
        inputs.filter((f) => f.includes(absent)),
        absent,
      ).toEqual([]);
    const { apiKey } = await newOrganization();
    const response = await invokeBundle(file, jsonRequest('/v1/webhooks/list', apiKey, {}), env);
    expect(response.statusCode, response.body).toBe(200);
    expect(JSON.parse(response.body).data).toMatchObject({ endpoints: [] });
  });

  it('webhooks/test names its message without bundling delivery or its signing library (messageIdOf lives beside the events)', async () => {
    const { inputs } = await bundleOf('functions/webhooks-test.ts', dir);
    for (const absent of ['standardwebhooks/', 'fast-sha256/', 'lib/webhooks/delivery.ts', 'lib/webhooks/ssrf.ts'])
      expect(
        inputs.filter((f) => f.includes(absent)),
        absent,
      ).toEqual([]);
    expect(inputs.some((f) => f.endsWith('lib/webhooks/events.ts'))).toBe(true);
  });

  it('webhooks/create checks URLs (refuses a private address) and replays an Idempotency-Key', async () => {
    const { file, inputs } = await bundleOf('functions/webhooks-create.ts', dir);
    expect(inputs.some((f) => f.endsWith('lib/webhooks/ssrf.ts'))).toBe(true);
    // The address ranges are matched with node:net's BlockList; ipaddr.js is the tests' oracle only.
    expect(inputs.filter((f) => f.includes('ipaddr.js/'))).toEqual([]);
    const { apiKey } = await newOrganization();
    const refused = await invokeBundle(
      file,
      jsonRequest('/v1/webhooks/create', apiKey, { url: 'https://10.0.0.1/hook', events: ['campaign.enriched'] }),
      env,
    );
    expect(refused.statusCode, refused.body).toBe(400);
    expect(JSON.parse(refused.body).error.code).toBe('invalid_request');
    const local = { ...env, WEBHOOKS_ALLOW_LOCALHOST: 'true' };
    const body = { url: 'http://127.0.0.1:9/hook', events: ['campaign.enriched'] };
    const first = await invokeBundle(
      file,
      jsonRequest('/v1/webhooks/create', apiKey, body, { 'idempotency-key': 'bundle-create-1' }),
      local,
    );
    expect(first.statusCode, first.body).toBe(200);
    const replay = await invokeBundle(
      file,
      jsonRequest('/v1/webhooks/create', apiKey, body, { 'idempotency-key': 'bundle-create-1' }),
      local,
    );
    expect(replay.statusCode).toBe(200);
    expect(replay.headers?.['idempotent-replayed']).toBe('true');
    expect(JSON.parse(replay.body).data.id).toBe(JSON.parse(first.body).data.id);
  });

  it("campaigns/update (takes forms) carries busboy's multipart parser, not its urlencoded one, and reads a multipart and an urlencoded body (lib/lambda/busboy-multipart.cjs)", async () => {
    const { file, inputs } = await bundleOf('functions/campaigns-update.ts', dir);
    const busboy = inputs.filter((f) => f.includes('@fastify/busboy/'));
    expect(busboy.some((f) => f.endsWith('@fastify/busboy/lib/types/multipart.js'))).toBe(true);
    expect(busboy.filter((f) => /@fastify\/busboy\/(index\.js|lib\/types\/urlencoded\.js|lib\/utils\/Decoder\.js)$/.test(f))).toEqual([]);
    const { apiKey } = await newOrganization();
    const created = await call(baseUrl(), '/v1/campaigns/create', { apiKey, body: { name: 'Before forms', accountIds: ['acct_1'] } });
    expect(created.status).toBe(200);
    const campaignId = created.body.data.id as string;
    const formRequest = async (body: FormData | URLSearchParams) => {
      const request = new Request('http://localhost/v1/campaigns/update', { method: 'POST', body });
      return apiGatewayEvent({
        method: 'POST',
        url: '/v1/campaigns/update',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': request.headers.get('content-type')! },
        body: Buffer.from(await request.arrayBuffer()),
        requestId: `bundle-${Math.random()}`,
      });
    };
    const multipart = new FormData();
    multipart.set('campaignId', campaignId);
    multipart.set('name', 'Renamed by multipart');
    const renamed = await invokeBundle(file, await formRequest(multipart), env);
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(JSON.parse(renamed.body).data).toMatchObject({ id: campaignId, name: 'Renamed by multipart' });
    const urlencoded = new URLSearchParams({ campaignId, excludeEnrichedWithinDays: '30' });
    const changed = await invokeBundle(file, await formRequest(urlencoded), env);
    expect(changed.statusCode, changed.body).toBe(200);
    expect(JSON.parse(changed.body).data).toMatchObject({ name: 'Renamed by multipart', excludeEnrichedWithinDays: 30 });
  });

  it('an S3 user carries the schemas of the S3 operations it sends, not all of S3 (scripts/sdk-literal-trait-keys.mjs, run on install)', async () => {
    const { file, inputs } = await bundleOf('functions/campaigns-export.ts', dir);
    expect(inputs.some((f) => f.includes('@aws-sdk/client-s3/dist-es/schemas/'))).toBe(true);
    const code = readFileSync(file, 'utf8');
    // Operations the export sends (GetObject, multipart upload) keep their schemas; bucket configuration does not come along.
    expect(code).toContain('CreateMultipartUpload');
    for (const unused of ['AnalyticsAndOperator', 'ReplicationConfiguration', 'PutBucketLifecycleConfiguration'])
      expect(code, unused).not.toContain(unused);
  });

  it('campaigns/create (an S3 user) stores its account list in S3; get reads the campaign back and quote reads the list from S3', async () => {
    const { file } = await bundleOf('functions/campaigns-create.ts', dir);
    const { apiKey } = await newOrganization();
    const created = await invokeBundle(
      file,
      jsonRequest('/v1/campaigns/create', apiKey, { name: 'Bundled', accountIds: ['acct_1', 'acct_2'] }),
      env,
    );
    expect(created.statusCode, created.body).toBe(200);
    const campaignId = JSON.parse(created.body).data.id as string;
    const { file: get } = await bundleOf('functions/campaigns-get.ts', dir);
    const read = await invokeBundle(get, jsonRequest('/v1/campaigns/get', apiKey, { campaignId }), env);
    expect(read.statusCode, read.body).toBe(200);
    expect(JSON.parse(read.body).data).toMatchObject({ id: campaignId, name: 'Bundled' });
    // An S3 read (the account list's GetObject, a streamed body) in a bundle whose event-stream codec is a stub.
    const { file: quote, inputs } = await bundleOf('functions/campaigns-quote.ts', dir);
    expect(inputs.filter((f) => f.includes('@smithy/core/dist-es/submodules/event-streams/'))).toEqual([]);
    const quoted = await invokeBundle(quote, jsonRequest('/v1/campaigns/quote', apiKey, { campaignId }), env);
    expect(quoted.statusCode, quoted.body).toBe(200);
    expect(JSON.parse(quoted.body).data).toMatchObject({ accounts: { requested: 2 } });
  });

  it("campaigns/enrich and campaigns/quote carry the reads their evaluation makes, not the stores' writes (history splits, warehouse import and erasure, campaign list)", async () => {
    // The narrow readers of lib/root.ts (accountHistoryReader, the warehouse's reads, campaignOrganizationReader) keep the
    // largest bundle within its budget (bench `bundles`, docs/architecture.md); a whole store imported again would undo it.
    for (const entry of ['functions/campaigns-enrich.ts', 'functions/campaigns-quote.ts']) {
      const { file, inputs } = await bundleOf(entry, dir);
      const text = readFileSync(file, 'utf8');
      for (const absent of ['lib/warehouse/identifiers.ts', 'lib/db/query.ts'])
        expect(
          inputs.filter((f) => f.endsWith(absent)),
          `${entry}: ${absent}`,
        ).toEqual([]);
      // A history write's race message and the campaign list's filter: code of the full stores only.
      for (const absent of ['kept losing races', 'resultsExpireAt > :now'])
        expect(text.includes(absent), `${entry}: ${absent}`).toBe(false);
      expect(inputs.some((f) => f.endsWith('lib/history/store.ts'))).toBe(true);
    }
  });

  it("the functions that deliver results read the suppression sets without the suppression store's writes (suppress, erasures)", async () => {
    // The suppression policies (lib/privacy/deliverable.ts) get the store of the two set reads (lib/root.ts suppressionSets).
    for (const entry of ['functions/campaigns-results.ts', 'functions/campaigns-export.ts', 'functions/workflow-find-contacts.ts']) {
      const { file } = await bundleOf(entry, dir);
      const text = readFileSync(file, 'utf8');
      expect(text.includes('#pk, #version'), `${entry}: the sets' read`).toBe(true);
      // The set's update of `suppress` and the erasure job's lease: code of the full store only.
      for (const absent of ['ADD #set :entries', 'leaseUntil']) expect(text.includes(absent), `${entry}: ${absent}`).toBe(false);
    }
  });

  it('results pages and the stream read the sequence and the campaign without their writes (lib/root.ts sequenceReader, campaignOrganizationReader)', async () => {
    for (const entry of ['functions/campaigns-results.ts', 'functions/campaigns-results-stream.ts']) {
      const text = readFileSync((await bundleOf(entry, dir)).file, 'utf8');
      // A range read by assign when a batch is retried, and the pacing's race message: code of the full store only.
      // The campaign list's filter: code of the full campaign store (both read the campaign through campaignOrganizationReader).
      for (const absent of ['Results range ending at', 'Pacing attempt', 'resultsExpireAt > :now'])
        expect(text.includes(absent), `${entry}: ${absent}`).toBe(false);
    }
    // campaigns/accounts reads the campaign with its organization the same way.
    const accounts = readFileSync((await bundleOf('functions/campaigns-accounts.ts', dir)).file, 'utf8');
    expect(accounts.includes('resultsExpireAt > :now')).toBe(false);
    // The workflow, which assigns them, keeps both.
    const text = readFileSync((await bundleOf('functions/workflow-find-contacts.ts', dir)).file, 'utf8');
    for (const present of ['Results range ending at', 'Pacing attempt']) expect(text.includes(present), present).toBe(true);
  });

  it('a workflow task (expire, an S3 user) runs its DynamoDB step: a campaign that is not enriched is left as it is', async () => {
    const { file } = await bundleOf('functions/workflow-expire.ts', dir);
    const { organizationId, apiKey } = await newOrganization();
    const { file: create } = await bundleOf('functions/campaigns-create.ts', dir);
    const created = await invokeBundle(
      create,
      jsonRequest('/v1/campaigns/create', apiKey, { name: 'Not enriched', accountIds: ['acct_1'] }),
      env,
    );
    const campaignId = JSON.parse(created.body).data.id as string;
    const output = (await invokeBundle(file, { organizationId, campaignId, attemptId: 'att_none' }, env)) as unknown as Record<
      string,
      unknown
    >;
    expect(output).toMatchObject({ expired: false, objectsDeleted: 0 });
  });
});

describe('idempotency wiring', () => {
  it('refuses to build the handler of an idempotent operation without the idempotency stage (apiHandler instead of idempotentApiHandler)', () => {
    expect(() => createApiHandler(createCampaignOperation, async () => ({}), { findApiKey: async () => undefined })).toThrow(
      /createCampaign is idempotent/,
    );
  });
});
