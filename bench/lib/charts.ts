/**
 * The benchmark's charts, as SVG next to RESULTS.md: warm latency per
 * operation against the bare GetItem floor, and launch, workflow and export
 * against the campaign size. Vega-Lite specifications rendered by Vega in
 * Node (`view.toSVG()`, no browser, no canvas), from `results.json` and the
 * scale points of earlier runs (bench/lib/scale-points.ts).
 *
 * RESULTS.md gets (or has replaced) one block between the `charts` markers
 * that embeds them, so `npm run bench:charts` can redraw them from a stored
 * `results.json` without re-running the bench.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { readScalePoints, scalePointOf, withPoint, writeScalePoints, type ScalePoint, type StoredResults } from './scale-points';
import { CHARTS_BLOCK_END, CHARTS_BLOCK_START, wrap } from './results';

/** File names of the charts, in the folder of RESULTS.md. */
export const CHART_FILES = { latency: 'latency.svg', scale: 'scale.svg' } as const;

const BLOCK_START = CHARTS_BLOCK_START;
const BLOCK_END = CHARTS_BLOCK_END;

const COLORS = { measured: '#4c78a8', p99: '#e45756', floor: '#54a24b', budget: '#f58518' };
const FONT = 'Helvetica, Arial, sans-serif';
const CONFIG = {
  font: FONT,
  view: { stroke: '#ddd' },
  axis: { labelFontSize: 11, titleFontSize: 11 },
  axisY: { labelLimit: 400 },
  header: { labelFontSize: 12, labelFontWeight: 'bold' as const, labelLimit: 400 },
  title: { subtitleFontSize: 11, subtitleColor: '#444' },
};

/** Renders a Vega-Lite specification to SVG text. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const ms = (text: string | number | undefined) => (typeof text === 'number' ? text : Number(String(text ?? '').replace(/[^\d.]/g, '')));

/** One row per operation and concurrency: p50, p99, the floor and the budget of the same run (ms). */
export function latencyRows(results: StoredResults) {
  return results.figures
    .filter((f) => f.group === 'warm latency' && f.value !== null && f.floor)
    .map((f) => {
      // `describe, c=1: …` (older runs) or `describe, c=1 handler in-process: …` / `describe, c=16 via local HTTP server: …`: one panel per concurrency and way of calling.
      const [, operation, concurrency] = /^(.*), (c=\d+(?: [^:]*)?)(?::.*)?$/.exec(f.name) ?? [null, f.name, ''];
      // Newer runs store the ratio to the floor (unit ×) with p50 in ms beside it; older ones the p50 in ms.
      const ratio = f.unit === '×';
      const p50 = ratio ? ms(f.extra?.p50) : f.value!;
      const floor = f.floor!.value;
      return {
        operation: operation!,
        concurrency: concurrency!,
        p50,
        p99: ms(f.extra?.p99),
        floor,
        budget: f.budget ? (ratio ? f.budget.limit * floor : f.budget.limit) : null,
        label: `${p50.toFixed(1)} ms · ${(p50 / floor).toFixed(2)}× floor`,
      };
    });
}

/** Warm latency per operation (bars: p50; ticks: p99) against the bare GetItem floor and the budget, one panel per concurrency. */
export function latencySpec(rows: ReturnType<typeof latencyRows>): TopLevelSpec {
  const operation = { field: 'operation', type: 'nominal' as const, sort: null, title: null };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'Warm latency per operation against the bare GetItem floor',
      subtitle: [
        "bars: p50 · red ticks: p99 · green dashed: bare GetItem p50 (the floor, same run; list: its own Query, bare) · orange ticks: budget (the issue's ratio × floor, handler in-process at c=1)",
        'one panel per number of concurrent clients and way of calling (handler in-process; through the local HTTP server), each with its own scale',
      ],
      anchor: 'start',
    },
    data: { values: rows },
    facet: {
      row: {
        field: 'concurrency',
        type: 'nominal',
        title: null,
        sort: ['c=1 handler in-process', 'c=1', 'c=1 via local HTTP server', 'c=16', 'c=16 via local HTTP server'],
      },
    },
    resolve: { scale: { x: 'independent' } },
    spec: {
      width: 560,
      height: { step: 26 },
      layer: [
        {
          mark: { type: 'bar', color: COLORS.measured, height: 16 },
          encoding: { y: operation, x: { field: 'p50', type: 'quantitative', title: 'ms' } },
        },
        {
          mark: { type: 'tick', color: COLORS.p99, thickness: 2, size: 18 },
          encoding: { y: operation, x: { field: 'p99', type: 'quantitative' } },
        },
        {
          mark: { type: 'rule', color: COLORS.floor, strokeDash: [5, 3], strokeWidth: 2 },
          encoding: { x: { aggregate: 'max', field: 'floor', type: 'quantitative' } },
        },
        {
          mark: { type: 'tick', color: COLORS.budget, thickness: 3, size: 22 },
          encoding: { y: operation, x: { field: 'budget', type: 'quantitative' } },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, fontSize: 10 },
          encoding: { y: operation, x: { field: 'p50', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    },
    config: CONFIG,
  };
}

const PANELS = [
  ['launchSeconds', 'Launch: enrich call → response (s)'],
  ['workflowSeconds', 'Workflow: enrich call → enriched (s)'],
  ['exportSeconds', 'Export: call → presigned URL (s)'],
  ['exportPeakRssMB', 'Export: peak RSS of its process (MB)'],
] as const;

/** Long-form rows of the scale chart: one per point, panel and series (measured, floor, budget). */
export function scaleRows(points: readonly ScalePoint[]) {
  return points.flatMap((point) =>
    PANELS.flatMap(([key, panel]) => {
      const m = point[key];
      return [
        { accounts: point.accounts, panel, series: 'measured', value: m.value },
        ...(m.floor !== null ? [{ accounts: point.accounts, panel, series: 'floor (same run)', value: m.floor }] : []),
        ...(m.budget !== null ? [{ accounts: point.accounts, panel, series: 'budget', value: m.budget }] : []),
      ];
    }),
  );
}

/** Launch, workflow and export against the campaign size: measured, floor and budget lines, one panel each. */
export function scaleSpec(points: readonly ScalePoint[]): TopLevelSpec {
  const sizes = points.map((p) => `${p.accounts.toLocaleString('en-US')} (${p.startedAt.slice(0, 10)})`).join(', ');
  const maxAccounts = Math.max(...points.map((p) => p.accounts));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'Launch, workflow and export against the campaign size',
      subtitle: [
        `campaign sizes (run date): ${sizes}`,
        `${points[0]?.contactsPerAccount ?? 10} contacts per account; each size measured in its own run`,
      ],
      anchor: 'start',
    },
    data: { values: scaleRows(points) },
    facet: { field: 'panel', type: 'nominal', title: null, sort: PANELS.map(([, panel]) => panel) },
    columns: 2,
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: 300,
      height: 190,
      encoding: {
        x: {
          field: 'accounts',
          type: 'quantitative',
          title: 'accounts in the campaign',
          scale: { domain: [0, maxAccounts * 1.05] },
          axis: { format: '~s' },
        },
        y: { field: 'value', type: 'quantitative', title: null, scale: { zero: true } },
        color: {
          field: 'series',
          type: 'nominal',
          title: null,
          scale: { domain: ['measured', 'floor (same run)', 'budget'], range: [COLORS.measured, COLORS.floor, COLORS.budget] },
          legend: { orient: 'top', direction: 'horizontal' },
        },
        strokeDash: {
          field: 'series',
          type: 'nominal',
          title: null,
          scale: {
            domain: ['measured', 'floor (same run)', 'budget'],
            range: [
              [1, 0],
              [5, 3],
              [2, 2],
            ],
          },
        },
      },
      layer: [{ mark: { type: 'line', strokeWidth: 2 } }, { mark: { type: 'point', filled: true, size: 50 } }],
    },
    config: CONFIG,
  };
}

/** Options of {@link writeCharts}. */
export interface ChartOptions {
  /** Folder of results.json and RESULTS.md; the charts are written there. */
  dir: string;
  /** The scale points kept across runs (bench/scale-runs.json); this run's point is added to it. */
  scalePointsFile: string;
}

/**
 * Draws the charts of `dir/results.json` into `dir`, records this run's
 * scale point, and embeds the charts in `dir/RESULTS.md`.
 * @returns the paths written.
 * @throws Error when `dir/results.json` does not exist.
 */
export async function writeCharts({ dir, scalePointsFile }: ChartOptions): Promise<string[]> {
  const results = JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as StoredResults;
  const written: string[] = [];
  const sections: string[] = [];

  const latency = latencyRows(results);
  if (latency.length > 0) {
    const file = path.join(dir, CHART_FILES.latency);
    writeFileSync(file, await renderSvg(latencySpec(latency)));
    written.push(file);
    sections.push(
      `![Warm latency per operation against the bare GetItem floor](${CHART_FILES.latency})`,
      '',
      ...wrap(
        "Warm latency of each operation (p50 bars, p99 ticks) beside the bare GetItem floor (list: its own Query, bare) and the budget (the issue's ratio × floor) measured in the same run: the handlers invoked in-process at c=1 (budgeted), and through the local HTTP server at 1 and 16 concurrent clients (reported); the table below has the figures.",
      ),
      '',
    );
  }

  const thisRun = scalePointOf(results);
  const points = withPoint(readScalePoints(scalePointsFile), thisRun);
  if (thisRun) {
    writeScalePoints(scalePointsFile, points);
    written.push(scalePointsFile);
  }
  if (points.length > 0) {
    const file = path.join(dir, CHART_FILES.scale);
    writeFileSync(file, await renderSvg(scaleSpec(points)));
    written.push(file);
    sections.push(
      `![Launch, workflow and export against the campaign size](${CHART_FILES.scale})`,
      '',
      ...wrap(
        `Launch evaluation, enrich → enriched and export (time and peak memory) at ${points.map((p) => p.accounts.toLocaleString('en-US')).join(', ')} accounts, ` +
          'each beside its floor and budget where the bench has one. Sizes other than 100,000 come from `npm run bench -- --only=scale --accounts=N` ' +
          '(kept in `bench/scale-runs.json`); every size is its own run on a shared machine, so compare shapes rather than single points.',
      ),
      '',
    );
  }

  const markdownFile = path.join(dir, 'RESULTS.md');
  if (sections.length > 0 && existsSync(markdownFile)) {
    writeFileSync(markdownFile, embed(readFileSync(markdownFile, 'utf8'), ['## Charts', '', ...sections].join('\n')));
    written.push(markdownFile);
  }
  return written;
}

/** RESULTS.md with the charts block replaced, or inserted before the results table. */
export function embed(markdown: string, block: string): string {
  const wrapped = `${BLOCK_START}\n${block.trimEnd()}\n${BLOCK_END}\n`;
  const start = markdown.indexOf(BLOCK_START);
  const end = markdown.indexOf(BLOCK_END);
  if (start !== -1 && end > start) return markdown.slice(0, start) + wrapped + markdown.slice(end + BLOCK_END.length + 1);
  const table = markdown.indexOf('\n| group |');
  const at = table === -1 ? markdown.length : table + 1;
  return `${markdown.slice(0, at)}${wrapped}\n## Figures\n\n${markdown.slice(at)}`;
}
