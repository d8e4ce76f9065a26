/**
 * Measures what the FindContacts Map's concurrency (infra/workflow.ts
 * MAP_CONCURRENCY) buys on the local stack: the batches of one campaign run
 * through the very step the Map invokes (findContactsBatch: its batch
 * object, the warehouse reads, its result part, its outcome record), at
 * 4, 8, 16 and 32 at once, as the Map would run them; Step Functions' own
 * per-iteration overhead is not part of it. Also counts the S3 bytes the
 * batches read (the issue #13 budget: ≤ 2 × the eligible list), and what
 * writing the per-batch objects adds to a launch of 100,000 long IDs.
 *
 *   npx tsx scripts/measure-map-concurrency.ts [accounts=40000] [levels=4,8,16,32]
 *
 * Results and the reasoning from them: docs/deploy.md "Workflow concurrency".
 */
import pMap from 'p-map';
import { blankAccount } from '../lib/warehouse/schema';
import { startLocalStack } from '../infra/local/stack';
import { generateDemoWarehouse } from '../infra/local/demo-warehouse';

const accounts = Number(process.argv[2] ?? 40_000);
const levels = (process.argv[3] ?? '4,8,16,32').split(',').map(Number);
/** An account's batch-object fields (lib/enrichment/attempt-objects.ts), for an ID alone. */
const fieldsOf = (accountId: string) => blankAccount(accountId);

const stack = await startLocalStack({ api: false, tableName: 'map-concurrency', bucketName: 'map-concurrency' });
try {
  const { s3 } = await import('../lib/aws');
  const root = await import('../lib/root');
  const { findContactsBatch } = await import('../lib/enrichment/steps');
  const { writeAttemptLists } = await import('../lib/enrichment/attempt-objects');
  const { batchesOf, ENRICHMENT_BATCH_SIZE } = await import('../lib/enrichment/workflow');
  const { objectKeys } = await import('../lib/objects');

  // Bytes of every GetObject body the steps read (Content-Length of the response).
  let bytesRead = 0;
  s3().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const length = (out.response as { headers?: Record<string, string> } | undefined)?.headers?.['content-length'];
      if (context.commandName === 'GetObjectCommand' && length) bytesRead += Number(length);
      return out;
    },
    { step: 'deserialize', name: 'countBytes' },
  );

  // What launch adds: the eligible list and one object per batch, for 100,000 IDs of 128 characters (~13 MB).
  {
    const longIds = Array.from({ length: 100_000 }, (_, i) => `${String(i).padStart(8, '0')}${'x'.repeat(120)}`);
    const ref = {
      organizationId: 'org_measure',
      campaignId: 'camp_lists',
      attemptId: 'att_lists',
      eligibleObjectKey: objectKeys.eligibleList('org_measure', 'camp_lists', 'att_lists'),
    };
    for (let run = 1; run <= 3; run++) {
      const t0 = performance.now();
      await writeAttemptLists({ accountLists: root.accountLists() }, ref, longIds.map(fieldsOf));
      const t1 = performance.now();
      await root.accountLists().put(ref.eligibleObjectKey, longIds);
      const t2 = performance.now();
      console.log(
        `launch lists, 100,000 × 128-char IDs: eligible list + 100 batch objects ${(t1 - t0).toFixed(0)} ms; eligible list alone ${(t2 - t1).toFixed(0)} ms`,
      );
    }
  }

  const warehouse = generateDemoWarehouse(accounts).map((a) => ({ ...a, status: 'active' as const }));
  const started = performance.now();
  await root.embeddedWarehouse().importAccounts(warehouse);
  console.log(`imported ${accounts} accounts in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const ids = warehouse.map((a) => a.accountId);
  const organizationId = 'org_measure';
  const rows: string[] = [];

  for (const concurrency of levels) {
    const campaignId = `camp_measure_${concurrency}`;
    const attemptId = `att_measure_${concurrency}`;
    const eligibleObjectKey = objectKeys.eligibleList(organizationId, campaignId, attemptId);
    await writeAttemptLists(
      { accountLists: root.accountLists() },
      { organizationId, campaignId, attemptId, eligibleObjectKey },
      warehouse.map(({ contacts: _contacts, ...fields }) => fields),
    );
    await root.outcomes().recordEvaluation({
      organizationId,
      campaignId,
      evaluationId: attemptId,
      evaluatedAt: new Date().toISOString(),
      accountIds: ids,
      buckets: ids.map(() => 'eligible' as const),
      batchSize: ENRICHMENT_BATCH_SIZE,
    });
    const deps = { accountLists: root.accountLists(), warehouse: root.warehouse(), results: root.results(), outcomes: root.outcomes() };
    bytesRead = 0;
    const t0 = performance.now();
    const latencies: number[] = [];
    await pMap(
      batchesOf(ids.length),
      async (batch) => {
        const b0 = performance.now();
        await findContactsBatch(deps, { organizationId, campaignId, attemptId, eligibleObjectKey, batch });
        latencies.push(performance.now() - b0);
      },
      { concurrency },
    );
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length / 2)]!;
    const row = `| ${concurrency} | ${seconds.toFixed(1)} | ${Math.round(accounts / seconds)} | ${(p50 / 1000).toFixed(2)} | ${(bytesRead / 1e6).toFixed(2)} |`;
    rows.push(row);
    console.log(row);
  }
  console.log('\n| concurrency | seconds | accounts/s | batch p50 (s) | S3 MB read |\n|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  await stack.stop();
}
