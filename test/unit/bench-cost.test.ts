/**
 * The bench's cost model (bench/lib/cost.ts) and the pure parts of its
 * meters (bench/lib/meter.ts, bench/figures/round-trips.ts): dollars from
 * counted usage, Lambda seconds from CPU-seconds at a memory, S3 billing
 * classes, CPU shared among invocations in flight, round trips as waves.
 */
import { describe, expect, it } from 'vitest';
import { costLines, gbSeconds, lambdaSeconds, PRICES, scaleLines, totalOf, vcpuShare, type Usage } from '../../bench/lib/cost';
import { CpuLedger, s3Billing } from '../../bench/lib/meter';
import { waves } from '../../bench/lib/stack';
import type { CallRecord } from '../../bench/lib/stack';

const usage: Usage = {
  dynamodb: { rru: 2_000_000, wru: 1_000_000 },
  s3: { putClass: 1_000, getClass: 10_000, storedByteMonths: 2e9, transferOutBytes: 1e9 },
  stepFunctions: { transitions: 4_000 },
  lambda: [{ functionId: 'F', memoryMb: 1769, invocations: 10, cpuSeconds: 10 }],
  apiGateway: { requests: 1_000_000 },
};

describe('cost model', () => {
  it('names its prices with their date', () => {
    expect(PRICES.asOf).toMatch(/us-east-1 list prices as of \d{4}-\d{2}/);
  });

  it('prices every counted unit at the list price', () => {
    const lines = Object.fromEntries(costLines(usage).map((line) => [line.item, line.dollars]));
    expect(lines['DynamoDB read request units']).toBeCloseTo(0.25, 9);
    expect(lines['DynamoDB write request units']).toBeCloseTo(0.625, 9);
    expect(lines['S3 PUT/COPY/POST/LIST requests']).toBeCloseTo(0.005, 9);
    expect(lines['S3 GET/HEAD requests']).toBeCloseTo(0.004, 9);
    expect(lines['S3 storage']).toBeCloseTo(0.046, 9);
    expect(lines['data transfer out (download)']).toBeCloseTo(0.09, 9);
    expect(lines['Step Functions state transitions']).toBeCloseTo(0.1, 9);
    expect(lines['Lambda requests']).toBeCloseTo(0.000002, 12);
    // 10 CPU-s at one vCPU = 10 s × 1769/1024 GB.
    expect(lines['Lambda duration (arm64)']).toBeCloseTo(10 * (1769 / 1024) * PRICES.lambdaGbSecondArm, 12);
    expect(lines['API Gateway HTTP API requests']).toBeCloseTo(1, 9);
  });

  it('amortizes by scaling every line', () => {
    const lines = costLines(usage);
    expect(totalOf(scaleLines(lines, 1000 / 100_000))).toBeCloseTo(totalOf(lines) / 100, 12);
  });

  it('turns CPU-seconds into Lambda seconds by the vCPU share of the memory (1,769 MB = one vCPU)', () => {
    expect(vcpuShare(1769)).toBe(1);
    expect(vcpuShare(3538)).toBe(1);
    expect(lambdaSeconds(5, 1024)).toBeCloseTo(5 / (1024 / 1769), 9);
    // CPU-bound GB-seconds do not depend on the memory up to one vCPU.
    expect(gbSeconds({ functionId: 'F', memoryMb: 1024, invocations: 1, cpuSeconds: 5 })).toBeCloseTo(
      gbSeconds({ functionId: 'F', memoryMb: 1769, invocations: 1, cpuSeconds: 5 }),
      9,
    );
    // At least 1 ms is billed per invocation.
    expect(gbSeconds({ functionId: 'F', memoryMb: 1024, invocations: 1000, cpuSeconds: 0 })).toBeCloseTo(1, 9);
  });
});

describe('meters', () => {
  it('classes S3 requests as S3 bills them', () => {
    expect(s3Billing('PUT', '/bucket/key')).toBe('put');
    expect(s3Billing('POST', '/bucket/key?uploads')).toBe('put');
    expect(s3Billing('GET', '/bucket?list-type=2&prefix=campaigns/')).toBe('put');
    expect(s3Billing('GET', '/bucket/campaigns/a/b.json')).toBe('get');
    expect(s3Billing('HEAD', '/bucket/key')).toBe('get');
    expect(s3Billing('DELETE', '/bucket/key')).toBe('delete');
    expect(s3Billing('POST', '/bucket?delete')).toBe('delete');
  });

  it('gives each finished invocation a share of the CPU used while it was in flight', () => {
    const ledger = new CpuLedger();
    const endA = ledger.begin('A');
    const endB = ledger.begin('B');
    // Burn 10 ms of CPU (counted by process.cpuUsage, not by the clock) with both in flight: each gets half.
    const start = process.cpuUsage();
    for (let used = 0; used < 10_000;) {
      const d = process.cpuUsage(start);
      used = d.user + d.system;
    }
    const a = endA();
    const b = endB();
    expect(a.cpuSeconds).toBeGreaterThanOrEqual(0.005 - 1e-6);
    expect(b.cpuSeconds).toBeGreaterThanOrEqual(a.cpuSeconds);
    expect(ledger.byKind().get('A')).toMatchObject({ count: 1 });
    expect(ledger.byKind().get('B')).toMatchObject({ count: 1 });
  });

  it('groups calls whose time on the wire overlaps into one round trip', () => {
    const call = (at: number, ms: number): CallRecord => ({ service: 'dynamodb', command: 'GetItem', kind: 'campaign', at, ms });
    expect(waves([call(0, 5), call(1, 5), call(10, 2)]).map((w) => w.length)).toEqual([2, 1]);
    expect(waves([])).toEqual([]);
  });
});
