/**
 * The benchmark's charts (bench/lib/charts.ts, bench/lib/scale-points.ts):
 * figures read from a stored results.json, scale points merged across runs,
 * SVG rendered in Node, and the RESULTS.md block replaced in place.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { embed, latencyRows, latencySpec, renderSvg, scaleRows, scaleSpec } from '../../bench/lib/charts';
import { scalePointOf, withPoint, type ScalePoint, type StoredResults } from '../../bench/lib/scale-points';

const stored = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../bench/results.json'), 'utf8')) as StoredResults;

const point = (accounts: number, startedAt: string): ScalePoint => ({
  accounts,
  contactsPerAccount: 10,
  startedAt,
  launchSeconds: { value: 1, floor: 1, budget: 10 },
  workflowSeconds: { value: 2, floor: null, budget: 3 },
  exportSeconds: { value: 3, floor: null, budget: 15 },
  exportPeakRssMB: { value: 100, floor: 50, budget: 300 },
});

describe('figures from results.json', () => {
  it('reads warm latency per operation and concurrency with its floor, p99 and budget', () => {
    const rows = latencyRows(stored);
    const figures = stored.figures.filter((f) => f.group === 'warm latency');
    expect(rows).toHaveLength(figures.length);
    // `describe, c=1: …` in older runs, `describe, c=1 handler in-process: …` since the budget moved to the handler.
    const figure = figures.find((f) => /^describe, c=1( handler in-process)?(:|$)/.test(f.name))!;
    const describeC1 = rows.find((r) => r.operation === 'describe' && r.concurrency === /^describe, (c=1[^:]*)/.exec(figure.name)![1])!;
    // Runs since issue #18 store the ratio to the floor (unit ×) with the p50 in ms beside it; older ones the p50 itself.
    const ratio = figure.unit === '×';
    expect(describeC1).toMatchObject({
      p50: ratio ? Number(String(figure.extra!.p50).replace(' ms', '')) : figure.value,
      floor: figure.floor!.value,
      p99: Number(String(figure.extra!.p99).replace(' ms', '')),
    });
    expect(describeC1.budget).toBeCloseTo(ratio ? figure.budget!.limit * figure.floor!.value : figure.budget!.limit, 6);
  });

  it('reads a ratio figure (p50 / floor): p50 from its extra, the budget as ratio × floor (ms)', () => {
    const ratioFigure = {
      figure: 'warm latency / list (filters.status = draft, 25 items), c=1: p50 / bare Query',
      group: 'warm latency',
      name: 'list (filters.status = draft, 25 items), c=1: p50 / bare Query',
      value: 2,
      unit: '×',
      budget: { op: '<=' as const, limit: 1.3, text: '≤ 1.3×' },
      floor: { value: 4, unit: 'ms', what: 'the same Query, bare p50, c=1' },
      pass: false,
      extra: { p50: '8 ms', p99: '12.5 ms' },
    };
    const [row] = latencyRows({ ...stored, figures: [ratioFigure] } as StoredResults);
    expect(row).toMatchObject({ operation: 'list (filters.status = draft, 25 items)', concurrency: 'c=1', p50: 8, p99: 12.5, floor: 4 });
    expect(row!.budget).toBeCloseTo(5.2, 6);
  });

  it('keeps the way of calling in the panel: handler in-process and through the local HTTP server apart', () => {
    const figure = (name: string) => ({
      figure: `warm latency / ${name}`,
      group: 'warm latency',
      name,
      value: 1.2,
      unit: '×',
      budget: null,
      floor: { value: 1, unit: 'ms', what: 'bare GetItem' },
      pass: null,
      extra: { p50: '1.2 ms', p99: '2 ms' },
    });
    const rows = latencyRows({
      ...stored,
      figures: [figure('get, c=1 handler in-process: p50 / bare GetItem'), figure('get, c=16 via local HTTP server: p50 / bare GetItem')],
    } as StoredResults);
    expect(rows.map((r) => [r.operation, r.concurrency])).toEqual([
      ['get', 'c=1 handler in-process'],
      ['get', 'c=16 via local HTTP server'],
    ]);
  });

  it('reads the scale point of a full run; the workflow rate becomes seconds', () => {
    const p = scalePointOf(stored)!;
    const workflow = stored.figures.find((f) => f.group === 'enrichment workflow' && /get answers enriched$/.test(f.name))!;
    expect(p.accounts).toBe(stored.run.sizes.accounts);
    expect(p.workflowSeconds.value).toBeCloseTo(p.accounts / workflow.value!, 6);
    expect(p.workflowSeconds.budget).toBeCloseTo(p.accounts / workflow.budget!.limit, 6);
    expect(scalePointOf({ ...stored, run: { ...stored.run, mode: 'quick' } })).toBeUndefined();
    expect(scalePointOf({ ...stored, figures: stored.figures.filter((f) => f.group !== 'export') })).toBeUndefined();
  });

  it('merges points by size: a newer run replaces an older one, never the reverse', () => {
    const old = point(10_000, '2026-01-01T00:00:00Z');
    const newer = { ...point(10_000, '2026-02-01T00:00:00Z'), launchSeconds: { value: 9, floor: null, budget: null } };
    expect(withPoint([point(30_000, '2026-01-01T00:00:00Z'), old], newer).map((p) => [p.accounts, p.startedAt])).toEqual([
      [10_000, '2026-02-01T00:00:00Z'],
      [30_000, '2026-01-01T00:00:00Z'],
    ]);
    expect(withPoint([newer], old)).toEqual([newer]);
    // A measure without a floor or a budget draws only the measured series.
    expect(
      scaleRows([newer])
        .filter((r) => r.panel.startsWith('Launch'))
        .map((r) => r.series),
    ).toEqual(['measured']);
  });
});

describe('rendering and embedding', () => {
  it('renders both charts to SVG in Node', async () => {
    const latency = await renderSvg(latencySpec(latencyRows(stored)));
    expect(latency.startsWith('<svg')).toBe(true);
    expect(latency).toContain('describe');
    expect(latency).toContain('c=16');
    const scale = await renderSvg(scaleSpec([point(10_000, '2026-01-01T00:00:00Z'), point(100_000, '2026-01-02T00:00:00Z')]));
    expect(scale.startsWith('<svg')).toBe(true);
    expect(scale).toContain('accounts in the campaign');
  });

  it('puts the charts block before the results table once, and replaces it on the next run', () => {
    const markdown = '# Benchmark results\n\nIntro.\n\n| group | figure |\n|---|---|\n| a | b |\n\n## Notes\n';
    const first = embed(markdown, '## Charts\n\n![x](latency.svg)');
    expect(first.indexOf('![x](latency.svg)')).toBeLessThan(first.indexOf('| group |'));
    const second = embed(first, '## Charts\n\n![y](latency.svg)');
    expect(second).not.toContain('![x]');
    expect(second.match(/## Charts/g)).toHaveLength(1);
    expect(second.match(/## Figures/g)).toHaveLength(1);
    expect(embed(second, '## Charts\n\n![y](latency.svg)')).toBe(second);
  });
});
