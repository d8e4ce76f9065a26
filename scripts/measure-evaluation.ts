/**
 * Focused measurement of launch evaluation (issue 13 item 3): the local
 * stack's emulators (DynamoDB Local, the local S3 endpoint), N warehouse
 * accounts, an organization with recency markers and CRM targets, then
 * `evaluateLaunch` timed with its DynamoDB calls counted. For comparison it
 * also times the former per-account reads (warehouse status + ENRICHED + CRM
 * keys, 100 per BatchGetItem) on the same data and machine.
 *
 *   npx tsx scripts/measure-evaluation.ts [--accounts=100000] [--runs=3]
 *
 * Prints one JSON object. Not a test: timings depend on the machine's load.
 */
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '../infra/local/stack';
import { blankAccount } from '../lib/warehouse/schema';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);

async function main() {
  const accounts = arg('accounts', 100_000);
  const runs = arg('runs', 3);
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  const local = await startLocalStack({ tableName: 'measure-evaluation', bucketName: 'measure-evaluation', api: false });
  try {
    const { ddb } = await import('../lib/aws');
    const { batchGet } = await import('../lib/db/batch');
    const keys = await import('../lib/db/keys');
    const { evaluateLaunch } = await import('../lib/enrichment/evaluate');
    const root = await import('../lib/root');
    const { config } = await import('../lib/config');

    const ids = Array.from({ length: accounts }, (_, i) => `acc_measure_${String(i).padStart(7, '0')}`);
    const loadedAt = performance.now();
    for (let i = 0; i < ids.length; i += 5_000) {
      await root.embeddedWarehouse().importAccounts(
        ids.slice(i, i + 5_000).map((accountId, j) => ({
          ...blankAccount(accountId, (i + j) % 50 === 0 ? 'closed' : 'active'),
          name: accountId,
          contacts: [],
        })),
      );
    }
    const { organization } = await root.organizations().create({ name: 'measure', smbCredits: accounts });
    const organizationId = organization.id;
    // Four earlier campaigns of 25,000 accounts each inside a 30-day window, one outside it; 10,000 CRM targets.
    const now = Date.now();
    for (let c = 0; c < 5; c++) {
      const at = new Date(now - (c === 4 ? 60 : c + 1) * 86_400_000).toISOString();
      await root.accountHistory().recordEnrichment(organizationId, ids.slice(c * 20_000, c * 20_000 + 25_000), at);
    }
    await root.accountHistory().addCrmTargets(
      organizationId,
      ids.filter((_, i) => i % 10 === 3),
    );
    const loadSeconds = (performance.now() - loadedAt) / 1000;

    let calls: Record<string, number> = {};
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        calls[String(context.commandName)] = (calls[String(context.commandName)] ?? 0) + 1;
        return next(args);
      },
      { step: 'initialize', name: 'measureCalls' },
    );

    const deps = root.evaluationDependencies(organizationId);
    const current: { seconds: number; calls: Record<string, number>; excluded: unknown }[] = [];
    const former: { seconds: number; calls: Record<string, number> }[] = [];
    const parts: { statusesSeconds: number; listsSeconds: number }[] = [];
    for (let run = 0; run < runs; run++) {
      calls = {};
      let at = performance.now();
      const evaluation = await evaluateLaunch(deps, { organizationId, accountIds: ids, excludeEnrichedWithinDays: 30, now: new Date() });
      current.push({ seconds: (performance.now() - at) / 1000, calls, excluded: evaluation.excluded });

      // Its parts alone: the warehouse statuses (DynamoDB) and the per-organization lists (S3).
      calls = {};
      at = performance.now();
      await root.warehouse().getAccountStatuses(ids);
      const statusesSeconds = (performance.now() - at) / 1000;
      at = performance.now();
      await root.accountHistory().getFacts(organizationId, ids, { enrichedAfter: now - 30 * 86_400_000 });
      parts.push({ statusesSeconds, listsSeconds: (performance.now() - at) / 1000 });

      // The former reads: status + ENRICHED + CRM per account, in parallel, 100 keys a call.
      calls = {};
      at = performance.now();
      await Promise.all([
        root.warehouse().getAccountStatuses(ids),
        batchGet(
          ddb,
          config.tableName,
          ids.flatMap((id) => [keys.accountEnrichment(organizationId, id), keys.crmTarget(organizationId, id)]),
          ['accountId', 'lastEnrichedAt'],
        ),
      ]);
      former.push({ seconds: (performance.now() - at) / 1000, calls });
    }
    console.log(JSON.stringify({ accounts, loadSeconds, current, parts, formerReads: former }, null, 2));
  } finally {
    await local.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
