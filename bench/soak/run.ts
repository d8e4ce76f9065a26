/**
 * `npm run soak` (`tsx bench/soak/run.ts`): mixed traffic against the local
 * stack for a while, then the invariants (issue item 5).
 *
 *   npm run soak                       10 minutes
 *   npm run soak -- --minutes 1        a quick run
 *   npm run soak -- --connections 16 --rate 0     as fast as the stack answers
 *   npm run soak -- --model-runs 0     without the model-based run
 *
 * After the load it also runs the model-based test
 * (test/enrichment-model.test.ts) longer than `npm test` does:
 * `--model-runs` sequences (default 100) of up to 30 commands.
 *
 * This process hosts the stack exactly as the tests do (DynamoDB Local in
 * memory, s3rver in a temporary folder, the local Step Functions runner and
 * the API server on a free port), seeds the demo warehouse (3,000 accounts)
 * and four organizations, then:
 * - a child process (load.ts) runs autocannon with the request mix of
 *   protocol.ts (reads, creates, launches, exports, invalid, unauthenticated
 *   and cross-tenant requests), judging every answer against the contract;
 * - this process plays the operator meanwhile: credit top-ups and debits,
 *   capacity changes, cancels of running enrichments; and samples every
 *   organization (balance never negative);
 * - when the load ends, it waits for every attempt to end and checks the
 *   invariants of test/hostile/support/invariants.ts on every organization.
 *
 * Prints errors and p50/p99 per minute and a summary, writes the figures to
 * .local/soak-last-run.json (or --out FILE), and exits non-zero when an
 * invariant fails or any answer broke the contract.
 */
import { fork, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalStack, type LocalStack } from '../../infra/local/stack';
import type { LoadConfig, LoadMessage, Window } from './protocol';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    rate: { type: 'string', default: '100' },
    'model-runs': { type: 'string', default: '100' },
    out: { type: 'string', default: path.resolve(import.meta.dirname, '../../.local/soak-last-run.json') },
  },
});
const minutes = Number(values.minutes);
const connections = Number(values.connections);
const rate = Number(values.rate);
const modelRuns = Number(values['model-runs']);
if (!Number.isInteger(minutes) || minutes < 1) throw new Error(`--minutes must be a whole number ≥ 1, got ${values.minutes}`);
if (!Number.isInteger(connections) || connections < 1) throw new Error(`--connections must be ≥ 1, got ${values.connections}`);
if (!Number.isInteger(rate) || rate < 0) throw new Error(`--rate must be ≥ 0 (0: uncapped), got ${values.rate}`);
if (!Number.isInteger(modelRuns) || modelRuns < 0) throw new Error(`--model-runs must be ≥ 0, got ${values['model-runs']}`);

const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

// An exception nobody catches would end the soak (and `npm start`): count it instead, and fail the run.
const uncaught: string[] = [];
process.on('uncaughtException', (error) => uncaught.push(`${error.name}: ${error.message}`));
process.on('unhandledRejection', (error) => uncaught.push(`unhandled rejection: ${String(error)}`));

let stack: LocalStack | undefined;
let exitCode = 0;

try {
  // ---------------------------------------------------------------- stack
  const t0 = performance.now();
  stack = await startLocalStack({ tableName: 'campaign-enrichment-soak', bucketName: 'campaign-enrichment-soak' });
  const api = stack.api!;
  const { generateDemoWarehouse } = await import('../../infra/local/demo-warehouse');
  const { embeddedWarehouse, organizations, campaigns, enrichment, workflow, ledger, limits } = await import('../../lib/root');
  const { cancelEnrichment } = await import('../../lib/enrichment/cancel');
  const { checkInvariants } = await import('../../test/hostile/support/invariants');
  const { sendJson } = await import('../../test/hostile/support/contract');
  log(
    `stack up in ${Math.round(performance.now() - t0)} ms: API ${api.url}, DynamoDB Local ${stack.endpoints.dynamodbEndpoint}, S3 ${stack.endpoints.s3Endpoint}`,
  );

  // ---------------------------------------------------------------- seed
  const warehouse = generateDemoWarehouse();
  await embeddedWarehouse().importAccounts(warehouse);
  const accountIds = warehouse.map((a) => a.accountId);
  const STARTING_BALANCE = 5_000_000;
  const books: {
    organizationId: string;
    apiKey: string;
    startingBalance: number;
    adjustments: number;
    drafts: string[];
    enriched: string[];
  }[] = [];
  for (let i = 0; i < 4; i++) {
    const { organization, apiKey } = await organizations().create({
      name: `Soak ${i}`,
      smbCredits: STARTING_BALANCE,
      researchAgentCredits: 0,
      maxEnrichingAccounts: 50_000,
    });
    // The soak hammers each organization: its request rate (docs/limits.md) is raised, not measured, here.
    await limits().setLimits(organization.id, { requests: 100_000_000, exportsPerHour: 100_000_000, uploadsPerHour: 100_000_000 });
    const book = {
      organizationId: organization.id,
      apiKey,
      startingBalance: STARTING_BALANCE,
      adjustments: 0,
      drafts: [] as string[],
      enriched: [] as string[],
    };
    for (let c = 0; c < 23; c++) {
      const ids = Array.from({ length: 20 }, (_, k) => accountIds[(i * 700 + c * 20 + k) % accountIds.length]!);
      const res = await sendJson(api.url, '/v1/campaigns/create', apiKey, { name: `seed ${c}`, accountIds: ids });
      if (res.status !== 200) throw new Error(`seeding failed: ${res.text}`);
      (c < 3 ? book.enriched : book.drafts).push(res.body.data.id);
    }
    for (const id of book.enriched) await sendJson(api.url, '/v1/campaigns/enrich', apiKey, { campaignId: id });
    books.push(book);
  }
  const waitFor = async (what: string, done: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await waitFor(
    'the seeded campaigns to be enriched',
    async () => {
      for (const b of books)
        for (const id of b.enriched) if ((await campaigns().get(b.organizationId, id))?.status !== 'enriched') return false;
      return true;
    },
    60_000,
  );
  log(`seeded ${accountIds.length} warehouse accounts and ${books.length} organizations (20 drafts and 3 enriched campaigns each)`);

  // ---------------------------------------------------------------- load
  const child = fork(path.join(import.meta.dirname, 'load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const config: LoadConfig = {
    apiUrl: api.url,
    minutes,
    connections,
    rate,
    organizations: books.map((b) => ({ organizationId: b.organizationId, apiKey: b.apiKey, drafts: b.drafts, enriched: b.enriched })),
    accountIds,
  };
  const rss: number[] = [];
  const finished = new Promise<Extract<LoadMessage, { type: 'done' }>>((resolve, reject) => {
    child.on('message', (message: LoadMessage) => {
      if (message.type === 'minute') {
        const w = message.window;
        rss[w.minute - 1] = Math.round(process.memoryUsage().rss / 1_048_576);
        log(
          `minute ${w.minute}: ${w.requests} requests (${Math.round(w.requests / 60)}/s), ${w.errors} errors, ${w.timeouts} timeouts, p50 ${w.p50} ms, p99 ${w.p99} ms, max ${w.max} ms, server RSS ${rss[w.minute - 1]} MB`,
        );
        for (const sample of w.samples) log(`  error: ${sample}`);
      } else resolve(message);
    });
    child.on('exit', (code) => reject(new Error(`the load generator exited (${code}) before reporting`)));
  });
  child.send(config);
  log(`load: ${minutes} min, ${connections} connections, ${rate > 0 ? `capped at ${rate} requests/s` : 'uncapped'}`);

  // The operator, meanwhile: top-ups and debits, capacity changes, cancels; and the sampler.
  const operator = {
    topUps: 0,
    debits: 0,
    refusedDebits: 0,
    capacityChanges: 0,
    cancels: 0,
    cancelMisses: 0,
    samples: 0,
    violations: [] as string[],
  };
  let loadRunning = true;
  const operatorLoop = (async () => {
    while (loadRunning) {
      const book = books[Math.floor(Math.random() * books.length)]!;
      const roll = Math.random();
      try {
        if (roll < 0.35) {
          const delta = Math.random() < 0.7 ? 1 + Math.floor(Math.random() * 5_000) : -(1 + Math.floor(Math.random() * 500));
          try {
            await ledger().adjust(book.organizationId, delta);
            book.adjustments += delta;
            if (delta > 0) operator.topUps++;
            else operator.debits++;
          } catch (error) {
            if (!(error instanceof RangeError)) throw error;
            operator.refusedDebits++;
          }
        } else if (roll < 0.6) {
          const current = await organizations().get(book.organizationId);
          await organizations().setCapacity(book.organizationId, {
            maxEnrichingAccounts: current!.maxEnrichingAccounts + Math.floor(Math.random() * 10),
            externalEnrichingAccounts: Math.floor(Math.random() * 50),
          });
          operator.capacityChanges++;
        } else {
          const running = await sendJson(api.url, '/v1/campaigns/list', book.apiKey, { filters: { status: 'enriching' }, limit: 5 });
          const target = running.body?.data?.campaigns?.[0]?.id as string | undefined;
          if (target) {
            try {
              const result = await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, target);
              if (result.status === 'canceled') operator.cancels++;
              else operator.cancelMisses++;
            } catch (error) {
              if (!/only an enriching campaign can be canceled/.test((error as Error).message)) throw error;
              operator.cancelMisses++;
            }
          }
        }
        for (const b of books) {
          const o = await organizations().get(b.organizationId);
          operator.samples++;
          if (o && o.smbCredits < 0) operator.violations.push(`${b.organizationId}: balance ${o.smbCredits} < 0 during the run`);
          if (o && o.enrichingAccounts < o.externalEnrichingAccounts)
            operator.violations.push(`${b.organizationId}: enrichingAccounts below the external figure during the run`);
        }
      } catch (error) {
        operator.violations.push(`operator action failed: ${(error as Error).stack}`);
      }
      await new Promise((r) => setTimeout(r, 500 + Math.random() * 1_000));
    }
  })();

  const done = await finished;
  loadRunning = false;
  await operatorLoop;
  child.removeAllListeners('exit');

  // ---------------------------------------------------------------- invariants
  const t1 = performance.now();
  const enrichingLeft = async () => {
    let left = 0;
    for (const b of books) {
      const page = await sendJson(api.url, '/v1/campaigns/list', b.apiKey, { filters: { status: 'enriching' }, limit: 100 });
      left += page.body?.data?.campaigns?.length ?? 0;
    }
    return left;
  };
  await waitFor('every attempt to end', async () => (await enrichingLeft()) === 0, 180_000).catch((error: Error) =>
    operator.violations.push(error.message),
  );
  const report = await checkInvariants(api.url, books, { settled: true, quiescent: true, checkCeiling: true, concurrency: 32 });
  const invariantSeconds = (performance.now() - t1) / 1000;
  const violations = [...operator.violations, ...report.violations, ...uncaught.map((u) => `uncaught in the server process: ${u}`)];

  // ---------------------------------------------------------------- report
  const table = done.windows.map((w, i) => ({
    minute: w.minute,
    requests: w.requests,
    'req/s': Math.round(w.requests / 60),
    errors: w.errors,
    timeouts: w.timeouts,
    'p50 ms': w.p50,
    'p99 ms': w.p99,
    'max ms': w.max,
    'RSS MB': rss[i] ?? null,
  }));
  console.log('\nPer minute');
  console.table(table);
  console.log('By request kind (whole run)');
  console.table(
    Object.fromEntries(
      Object.entries(done.total.byKind).map(([k, v]) => [
        k,
        { requests: v.requests, errors: v.errors, 'p99 ms': v.p99, statuses: JSON.stringify(v.statuses) },
      ]),
    ),
  );
  const summary = {
    startedAt: new Date(Date.now() - (performance.now() - t0)).toISOString(),
    machine: { cpus: cpus().length, load: loadavg().map((l) => Math.round(l * 100) / 100), node: process.version },
    options: { minutes, connections, rate },
    total: {
      requests: done.total.requests,
      errors: done.total.errors,
      timeouts: done.total.timeouts,
      p50: done.total.p50,
      p99: done.total.p99,
      max: done.total.max,
    },
    autocannon: done.autocannon,
    perMinute: table,
    byKind: done.total.byKind,
    operator: { ...operator, violations: operator.violations.length },
    invariants: {
      seconds: Math.round(invariantSeconds),
      organizations: report.organizations,
      campaigns: report.campaigns,
      byStatus: report.byStatus,
      ledgerEntries: report.ledgerEntries,
      charged: report.charged,
      violations,
    },
    uncaught,
    errorSamples: [...new Set(done.windows.flatMap((w) => w.samples))].slice(0, 20),
  };
  mkdirSync(path.dirname(values.out!), { recursive: true });
  writeFileSync(values.out!, JSON.stringify(summary, null, 2));
  console.log(
    `\nTotal: ${done.total.requests} requests, ${done.total.errors} contract errors, ${done.total.timeouts} timeouts, p50 ${done.total.p50} ms, p99 ${done.total.p99} ms, max ${done.total.max} ms.`,
  );
  console.log(
    `Operator: ${operator.topUps} top-ups, ${operator.debits} debits (${operator.refusedDebits} refused), ${operator.capacityChanges} capacity changes, ${operator.cancels} cancels.`,
  );
  console.log(
    `Invariants (${Math.round(invariantSeconds)} s): ${report.organizations} organizations, ${report.campaigns} campaigns ${JSON.stringify(report.byStatus)}, ${report.ledgerEntries} ledger entries, ${report.charged} credits charged net.`,
  );
  if (violations.length > 0) {
    console.log(`\nINVARIANTS VIOLATED (${violations.length}):`);
    for (const v of violations.slice(0, 50)) console.log(`  - ${v}`);
    exitCode = 1;
  } else console.log('Every invariant holds.');
  if (done.total.errors > 0 || done.total.timeouts > 0) {
    console.log(`\nCONTRACT ERRORS: ${done.total.errors} answers broke the contract, ${done.total.timeouts} requests timed out. Samples:`);
    for (const sample of summary.errorSamples) console.log(`  - ${sample}`);
    exitCode = 1;
  }
  console.log(`\nFigures written to ${path.relative(process.cwd(), values.out!)}.`);
  if (modelRuns > 0) {
    // The model-based test, longer than in `npm test` (it hosts its own stack, as every test does).
    log(`model-based test: ${modelRuns} runs of up to 30 commands`);
    const model = spawnSync('npx', ['vitest', 'run', 'test/enrichment-model.test.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, MODEL_RUNS: String(modelRuns), MODEL_COMMANDS: '30', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      stdio: 'inherit',
    });
    if (model.status !== 0) {
      console.log('\nMODEL-BASED TEST FAILED (see above).');
      exitCode = 1;
    } else console.log('Model-based test passed.');
  }
} catch (error) {
  console.error('The soak failed to run:', error);
  exitCode = 2;
} finally {
  // Keep-alive sockets of the SDK clients may hold the server open: do not wait for them.
  await Promise.race([stack?.stop(), new Promise((r) => setTimeout(r, 5_000))]);
}
process.exit(exitCode);
