/**
 * Figure "sustained load": autocannon (its CLI, in its own process) on
 * POST /v1/campaigns/get at 32 connections for 30 s against the local
 * server; requests per second, p99 and the non-2xx count (budget: none).
 */
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { PATHS } from '../lib/api';
import { smallFixture } from '../lib/fixtures';
import { runAutocannon } from '../lib/children';
import { cpuBetween, cpuSnapshot } from '../lib/stack';
import { round } from '../lib/stats';

export async function runSustained(results: Results, stack: BenchStack, options: { seconds: number }): Promise<void> {
  const group = 'sustained load';
  const fixture = await smallFixture(stack, 'sustained');
  const before = cpuSnapshot(stack);
  const result = await runAutocannon({
    url: `${stack.apiUrl}${PATHS.get}`,
    connections: 32,
    seconds: options.seconds,
    headers: { authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ campaignId: fixture.campaignId }),
  });
  const cpu = cpuBetween(before, cpuSnapshot(stack));
  const name = `get, 32 connections, ${options.seconds} s`;
  results.add({
    group,
    name: `${name}: throughput`,
    value: result.requests.average,
    unit: 'req/s',
    extra: { total: result.requests.total },
  });
  results.add({
    group,
    name: `${name}: latency p99`,
    value: result.latency.p99,
    unit: 'ms',
    extra: { p50: `${result.latency.p50} ms`, p90: `${result.latency.p90} ms`, max: `${result.latency.max} ms` },
  });
  results.add({
    group,
    name: `${name}: non-2xx + errors + timeouts`,
    value: result.non2xx + result.errors + result.timeouts,
    unit: 'responses',
    budget: { op: '<=', limit: 0, text: 'zero' },
    extra: { non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts },
  });
  results.note(
    group,
    `autocannon ${options.seconds} s at 32 connections, its own process. During the run the bench process (API server) used ` +
      `${round(cpu.nodeCores, 2)} cores, DynamoDB Local ${round(cpu.javaCores, 2)} cores and s3rver ${round(cpu.s3Cores, 2)} cores on average (of 2; autocannon itself takes the rest). ` +
      'Each get is two DynamoDB round trips (API-key GetItem, then BatchGetItem of campaign and organization), both strongly consistent.',
  );
}
