/**
 * RESULTS.md as bench/lib/results.ts renders it (issue #33, point 8): a
 * one-screen summary first (misses first, then each group's tightest
 * figure, each beside its budget and floor), then the charts block, then the
 * full tables; no line absurdly long, whatever a figure's notes hold; and
 * the same text rendered again from results.json alone.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { embed } from '../../bench/lib/charts';
import {
  budgetRatio,
  CHARTS_BLOCK_END,
  CHARTS_BLOCK_START,
  MAX_CELL_CHARS,
  renderMarkdown,
  summaryLines,
  WRAP_WIDTH,
  wrap,
  type StoredFigure,
  type StoredRun,
} from '../../bench/lib/results';

const figure = (
  group: string,
  name: string,
  value: number,
  budget: StoredFigure['budget'],
  extra: Partial<StoredFigure> = {},
): StoredFigure => {
  const pass = budget === null ? null : budget.op === '<=' ? value <= budget.limit : value >= budget.limit;
  return { figure: `${group} / ${name}`, group, name, value, unit: 'ms', budget, floor: null, pass, ...extra };
};
const atMost = (limit: number) => ({ op: '<=' as const, limit, text: `≤ ${limit} ms` });
const atLeast = (limit: number) => ({ op: '>=' as const, limit, text: `≥ ${limit}` });

/** A run with one miss in the second group, a close pass, a long note and a reported-only group. */
function run(): StoredRun {
  const figures = [
    figure('bundle size', 'Small', 100, atMost(320)),
    figure('bundle size', 'Close', 317, atMost(320), { floor: { value: 342, unit: 'KB', what: 'bare client' } }),
    figure('warm latency', 'get p50', 1.44, atMost(1.4), {
      floor: { value: 2.76, unit: 'ms', what: 'bare GetItem' },
      note: 'x '.repeat(4_000),
    }),
    figure('warm latency', 'list p50', 1.2, atMost(1.3)),
    figure('throughput', 'accounts/s', 1_622, atLeast(5_000)),
    figure('setup', 'import', 118, null),
  ];
  return {
    run: { mode: 'full', only: null, startedAt: '2026-11-26T03:16:30.853Z', totalSeconds: 560, sizes: { accounts: 100_000 } },
    machine: { cpus: 2, cpuModel: 'AMD EPYC', memoryGiB: 23.5, kernel: '6', node: 'v24.21.0', loadAverageAtEnd: [3.7, 2.6, 2.4] },
    summary: { figures: figures.length, budgeted: 5, passed: 3, missed: ['warm latency / get p50', 'throughput / accounts/s'] },
    figures,
    // The note that made a 7,889-character line: hundreds of calls joined by arrows.
    notes: {
      'warm latency': [
        `Outside the evaluation reads: ${Array.from({ length: 300 }, (_, i) => `S3 PutObject(outcomes) ${i} ms`).join(' → ')}.`,
        '| a | b |',
        '|---|---|',
      ],
    },
    durationsSeconds: { latency: 60 },
    loadAverage: { latency: { before: 1, after: 2 } },
  };
}

describe('the summary', () => {
  const lines = summaryLines(run());
  const rows = lines.filter((line) => line.startsWith('| ') && !line.startsWith('| result'));

  it('says how many budgets were met, then lists every miss before any met figure', () => {
    expect(lines[0]).toBe('## Summary');
    expect(lines.join(' ')).toContain('**3 of 5 budgets met**, 2 missed');
    expect(rows.map((row) => row.split(' | ')[0])).toEqual(['| **MISS**', '| **MISS**', '| met 2/2', '| met 1/2']);
    expect(rows[0]).toContain('get p50');
    expect(rows[1]).toContain('accounts/s');
  });

  it('shows each figure beside its budget, its floor and how much of the budget it takes', () => {
    expect(rows[0]).toBe('| **MISS** | warm latency | get p50 | 1.44 ms | ≤ 1.4 ms | 2.76 ms (bare GetItem) | 1.03 |');
    // An at-least budget: the limit over the value.
    expect(rows[1]).toContain('| 3.08 |');
    // Each group's tightest met figure: 317 of 320, not 100.
    expect(rows[2]).toBe('| met 2/2 | bundle size | Close | 317 ms | ≤ 320 ms | 342 KB (bare client) | 0.99 |');
  });

  it('names the groups reported without a budget, and fits on one screen', () => {
    expect(lines.join('\n')).toContain('Reported without a budget (figures): setup (1).');
    expect(lines.length).toBeLessThanOrEqual(40);
  });
});

describe('RESULTS.md', () => {
  const markdown = renderMarkdown(run());

  it('opens with the summary, then the charts, then the full tables and the notes', () => {
    const at = (text: string) => markdown.indexOf(text);
    expect(at('# Benchmark results')).toBe(0);
    expect(at('## Summary')).toBeGreaterThan(0);
    expect(at(CHARTS_BLOCK_START)).toBeGreaterThan(at('## Summary'));
    expect(at('## Figures')).toBeGreaterThan(at(CHARTS_BLOCK_END));
    expect(at('## Notes by figure')).toBeGreaterThan(at('### throughput'));
    // The charts land between the summary and the tables.
    const withCharts = embed(markdown, '## Charts\n\n![x](latency.svg)');
    expect(withCharts.indexOf('![x](latency.svg)')).toBeGreaterThan(withCharts.indexOf('## Summary'));
    expect(withCharts.indexOf('![x](latency.svg)')).toBeLessThan(withCharts.indexOf('## Figures'));
  });

  it('keeps every line short: long notes leave the table and prose is wrapped', () => {
    const prose = markdown.split('\n').filter((line) => !line.startsWith('|'));
    for (const line of prose) expect(line.length).toBeLessThanOrEqual(WRAP_WIDTH + 'S3 PutObject(outcomes)'.length);
    const tableRows = markdown.split('\n').filter((line) => line.startsWith('|'));
    for (const row of tableRows) expect(row.length).toBeLessThanOrEqual(300);
    // The 8,000-character note is a numbered note under its table, the row points to it.
    expect(markdown).toMatch(/\| \*\*MISS\*\* \| note 1 \|/);
    expect(markdown).toMatch(/^1\. get p50: x x/m);
    // Tables inside the notes are kept as they are.
    expect(markdown).toContain('\n| a | b |\n|---|---|\n');
  });

  it('renders the committed results.json from the stored form alone, within the same limits', () => {
    const stored = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../bench/results.json'), 'utf8')) as StoredRun;
    const text = renderMarkdown(stored);
    expect(text.startsWith('# Benchmark results')).toBe(true);
    const longest = Math.max(...text.split('\n').map((line) => line.length));
    expect(longest).toBeLessThan(400);
    for (const missed of stored.summary.missed) expect(text.indexOf(missed.split(' / ')[1]!)).toBeLessThan(text.indexOf('## Figures'));
  });
});

describe('helpers', () => {
  it('wraps words greedily and keeps an over-long word whole', () => {
    expect(wrap('one two three', 9, '- ', '  ')).toEqual(['- one two', '  three']);
    expect(wrap(`a ${'b'.repeat(20)} c`, 10)).toEqual(['a', 'b'.repeat(20), 'c']);
  });

  it('measures a figure against its budget in both directions', () => {
    expect(budgetRatio({ value: 50, budget: atMost(100) })).toBe(0.5);
    expect(budgetRatio({ value: 2_500, budget: atLeast(5_000) })).toBe(2);
    expect(budgetRatio({ value: 1, budget: atMost(0) })).toBe(Infinity);
    expect(budgetRatio({ value: 1, budget: null })).toBeNull();
    expect(MAX_CELL_CHARS).toBeLessThan(WRAP_WIDTH + 1);
  });
});
