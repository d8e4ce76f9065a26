/**
 * The benchmark's results: every figure with its value, unit, budget and the
 * floor measured in the same run, written as `bench/results.json`
 * (machine-readable) and `bench/RESULTS.md` (readable: a one-screen summary,
 * misses first, then the charts, then the full tables; rendered from the
 * stored form alone, so it can be re-rendered from a results.json).
 */
import { cpus, loadavg, totalmem, release } from 'node:os';
import { writeFileSync } from 'node:fs';
import { round } from './stats';

/** A budget: the value must be at most (`<=`) or at least (`>=`) `limit`. */
export interface Budget {
  op: '<=' | '>=';
  limit: number;
  /** How the budget reads in the table, e.g. `≤ 1.5 × floor (3.1 ms)`. */
  text: string;
}

/** The floor a figure is compared with, measured in the same run. */
export interface Floor {
  value: number;
  unit: string;
  /** What the floor is, e.g. `bare GetItem, c=1`. */
  what: string;
}

/** One measured figure. */
export interface Figure {
  /** Section of the issue's table, e.g. `bundle size`. */
  group: string;
  /** What was measured within the group, e.g. `CampaignsGet`. */
  name: string;
  /** `null` when the measurement failed (see `note`). */
  value: number | null;
  unit: string;
  budget?: Budget;
  floor?: Floor;
  /** `true`/`false` against the budget; `null` when the figure is only reported. */
  pass: boolean | null;
  /** Secondary values shown beside the figure (gzip size, p99, …). */
  extra?: Record<string, number | string>;
  note?: string;
}

/** Input of {@link Results.add}: pass is derived from the budget. */
export type FigureInput = Omit<Figure, 'pass'>;

/** Figures plus the notes that explain misses and method, for one run. */
export class Results {
  readonly figures: Figure[] = [];
  /** Free-form notes by group: method, measured causes of misses, profiles. */
  readonly notes = new Map<string, string[]>();
  /** Duration of each figure module (seconds). */
  readonly durations: Record<string, number> = {};
  /** Load average samples around each figure module (1-minute). */
  readonly load: Record<string, { before: number; after: number }> = {};

  add(input: FigureInput): Figure {
    const figure: Figure = { ...input, pass: passOf(input.value, input.budget) };
    this.figures.push(figure);
    const mark = figure.pass === null ? ' ' : figure.pass ? '✓' : '✗';
    const extra = figure.extra
      ? `  ${Object.entries(figure.extra)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`
      : '';
    console.log(
      `  ${mark} ${figure.group} / ${figure.name}: ${formatValue(figure.value, figure.unit)}${figure.budget ? ` (budget ${figure.budget.text})` : ''}${extra}`,
    );
    return figure;
  }

  note(group: string, text: string): void {
    const list = this.notes.get(group) ?? [];
    list.push(text);
    this.notes.set(group, list);
  }
}

const passOf = (value: number | null, budget: Budget | undefined): boolean | null => {
  if (!budget) return null;
  if (value === null || !Number.isFinite(value)) return false;
  return budget.op === '<=' ? value <= budget.limit : value >= budget.limit;
};

/** A value with its unit for the table. */
export function formatValue(value: number | null, unit: string): string {
  if (value === null) return 'n/a';
  if (unit === '$') return `$${value.toPrecision(3)}`;
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${text} ${unit}` : text;
}

/** What the run was, for both outputs. */
export interface RunInfo {
  mode: 'full' | 'quick';
  only: string[] | null;
  startedAt: string;
  totalSeconds: number;
  sizes: Record<string, number>;
}

/** The machine a run measured on, as results.json stores it. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  /** 1-, 5- and 15-minute load averages when the run ended. */
  loadAverageAtEnd: number[];
}

function machine(): MachineInfo {
  const cpu = cpus();
  return {
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    kernel: release(),
    node: process.version,
    loadAverageAtEnd: loadavg().map((v) => round(v, 2)),
  };
}

/** A figure as results.json stores it. */
export interface StoredFigure extends Omit<Figure, 'budget' | 'floor' | 'extra' | 'note'> {
  /** `group / name`. */
  figure: string;
  budget: Budget | null;
  floor: Floor | null;
  extra?: Record<string, number | string>;
  note?: string;
}

/** One run as results.json stores it: everything RESULTS.md is rendered from. */
export interface StoredRun {
  run: RunInfo;
  machine: MachineInfo;
  summary: { figures: number; budgeted: number; passed: number; missed: string[] };
  figures: StoredFigure[];
  /** Notes by group: method, measured causes of misses, profiles. */
  notes: Record<string, string[]>;
  durationsSeconds: Record<string, number>;
  loadAverage: Record<string, { before: number; after: number }>;
}

/** The stored form of a run: the body of results.json, and what RESULTS.md is rendered from. */
export function storedRun(results: Results, run: RunInfo): StoredRun {
  return {
    run,
    machine: machine(),
    summary: {
      figures: results.figures.length,
      budgeted: results.figures.filter((f) => f.pass !== null).length,
      passed: results.figures.filter((f) => f.pass === true).length,
      missed: results.figures.filter((f) => f.pass === false).map((f) => `${f.group} / ${f.name}`),
    },
    figures: results.figures.map((f) => ({
      figure: `${f.group} / ${f.name}`,
      group: f.group,
      name: f.name,
      // Dollars keep three significant digits ($0.000298 is not 0); everything else three decimals.
      value: f.value === null ? null : f.unit === '$' ? Number(f.value.toPrecision(3)) : round(f.value, 3),
      unit: f.unit,
      budget: f.budget ?? null,
      floor: f.floor ? { ...f.floor, value: round(f.floor.value, 3) } : null,
      pass: f.pass,
      ...(f.extra ? { extra: f.extra } : {}),
      ...(f.note ? { note: f.note } : {}),
    })),
    notes: Object.fromEntries(results.notes),
    durationsSeconds: results.durations,
    loadAverage: results.load,
  };
}

/** Writes `results.json`. */
export function writeJson(file: string, stored: StoredRun): void {
  writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`);
}

/** Marks the block of RESULTS.md that `npm run bench:charts` (bench/lib/charts.ts) writes and replaces. */
export const CHARTS_BLOCK_START = '<!-- charts: written by npm run bench:charts (bench/lib/charts.ts); edits here are replaced -->';
/** Ends the charts block. */
export const CHARTS_BLOCK_END = '<!-- /charts -->';

/** Width prose of RESULTS.md is wrapped at, in characters. */
export const WRAP_WIDTH = 100;
/** Longest text kept in a table cell; longer text goes to a numbered note under its table. */
export const MAX_CELL_CHARS = 100;

/** What RESULTS.md says about how it was measured, above the full tables. */
export const INTRO = [
  'Produced by `npm run bench` (bench/run.ts). Each figure is measured on this machine against the local stack',
  '(DynamoDB Local, s3rver, the local Step Functions runner and the API server, as `npm start` runs them), beside its',
  'budget from the issue and, where one exists, the floor measured in the same run. Values are for this machine and',
  'DynamoDB Local, not AWS: they compare the code with the floor under the same conditions.',
];

const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * Greedy word wrap: lines of at most `width` characters, the first after
 * `first`, the others after `rest` (a list item's marker and its indent). A
 * word longer than the width stays whole on its own line.
 *
 * @example
 * wrap('one two three', 9, '- ', '  '); // ['- one two', '  three']
 */
export function wrap(text: string, width = WRAP_WIDTH, first = '', rest = ''): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else {
      line = empty ? line + word : `${line} ${word}`;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}

/**
 * How close a budgeted figure is to its budget: the value over the limit for
 * an at-most budget, the limit over the value for an at-least one. Above 1
 * is a miss; `null` for a figure without budget or value.
 */
export function budgetRatio(figure: Pick<StoredFigure, 'value' | 'budget'>): number | null {
  const { value, budget } = figure;
  if (!budget || value === null) return null;
  if (budget.op === '<=') return budget.limit === 0 ? (value <= 0 ? 0 : Infinity) : value / budget.limit;
  return value === 0 ? (budget.limit <= 0 ? 0 : Infinity) : budget.limit / value;
}

const floorText = (floor: Floor | null) => (floor ? `${formatValue(floor.value, floor.unit)} (${floor.what})` : '—');
const ratioText = (ratio: number | null) => (ratio === null ? '—' : Number.isFinite(ratio) ? ratio.toFixed(2) : '∞');

/**
 * The summary RESULTS.md opens with, one screen: how many budgets were met;
 * every missed figure first, beside its budget and its floor; then, per
 * group, its tightest figure (the one nearest its budget) with how many of
 * the group's budgets were met; then the groups that are only reported.
 */
export function summaryLines(stored: Pick<StoredRun, 'figures'>): string[] {
  const figures = stored.figures;
  const budgeted = figures.filter((f) => f.pass !== null);
  const missed = budgeted.filter((f) => f.pass === false);
  const groups = [...new Set(figures.map((f) => f.group))];
  const lines = [
    '## Summary',
    '',
    ...wrap(
      `**${budgeted.length - missed.length} of ${budgeted.length} budgets met**${missed.length > 0 ? `, ${missed.length} missed (first below)` : ''}. ` +
        'Per group its tightest figure: the one nearest its budget. "of budget" is the value over the budget\'s limit ' +
        '(for an at-least budget, the limit over the value): above 1.00 is a miss.',
    ),
    '',
    '| result | group | figure | value | budget | floor (same run) | of budget |',
    '|---|---|---|---:|---|---|---:|',
  ];
  const row = (result: string, f: StoredFigure) =>
    `| ${result} | ${escapeCell(f.group)} | ${escapeCell(f.name)} | ${formatValue(f.value, f.unit)} | ${escapeCell(f.budget?.text ?? '—')} | ${escapeCell(floorText(f.floor))} | ${ratioText(budgetRatio(f))} |`;
  for (const f of missed) lines.push(row('**MISS**', f));
  const reportedOnly: string[] = [];
  for (const group of groups) {
    const inGroup = budgeted.filter((f) => f.group === group);
    if (inGroup.length === 0) {
      reportedOnly.push(`${group} (${figures.filter((f) => f.group === group).length})`);
      continue;
    }
    const met = inGroup.filter((f) => f.pass === true);
    if (met.length === 0) continue;
    const tightest = met.reduce((a, b) => ((budgetRatio(b) ?? 0) > (budgetRatio(a) ?? 0) ? b : a));
    lines.push(row(`met ${met.length}/${inGroup.length}`, tightest));
  }
  lines.push('');
  if (missed.length > 0) lines.push('The measured cause of each miss is under its group in "Notes by figure" below.', '');
  if (reportedOnly.length > 0) lines.push(...wrap(`Reported without a budget (figures): ${reportedOnly.join(', ')}.`), '');
  return lines;
}

/**
 * One group's full table: every figure with its value, budget, floor and
 * result. Secondary values and notes short enough stay in the row; longer
 * ones become numbered notes under the table, wrapped, so no line is long.
 */
export function groupTableLines(group: string, figures: readonly StoredFigure[]): string[] {
  const lines = [`### ${group}`, '', '| figure | value | budget | floor (same run) | result | also |', '|---|---:|---|---|:---:|---|'];
  const below: string[] = [];
  for (const f of figures) {
    const result = f.pass === null ? 'reported' : f.pass ? 'pass' : '**MISS**';
    const extra = f.extra
      ? Object.entries(f.extra)
          .map(([k, v]) => `${k} ${typeof v === 'number' ? formatValue(v, '') : v}`)
          .join('; ')
      : '';
    let also = escapeCell([extra, f.note ?? ''].filter(Boolean).join('; '));
    if (also.length > MAX_CELL_CHARS) {
      below.push(
        ...wrap(`${f.name}: ${[extra, f.note ?? ''].filter(Boolean).join('; ')}`, WRAP_WIDTH, `${countNotes(below) + 1}. `, '   '),
      );
      also = `note ${countNotes(below)}`;
    }
    lines.push(
      `| ${escapeCell(f.name)} | ${formatValue(f.value, f.unit)} | ${escapeCell(f.budget?.text ?? '—')} | ${escapeCell(floorText(f.floor))} | ${result} | ${also} |`,
    );
  }
  lines.push('');
  if (below.length > 0) lines.push(...below, '');
  return lines;
}

const countNotes = (lines: readonly string[]) => lines.filter((line) => /^\d+\. /.test(line)).length;

/**
 * RESULTS.md of a stored run: the title and the summary (one screen, misses
 * first), the charts block (empty until `npm run bench:charts` fills it),
 * how it was measured and the full tables by group, the notes by
 * group (method and measured causes), then the machine. Prose is wrapped at
 * {@link WRAP_WIDTH}; table rows hold no cell over {@link MAX_CELL_CHARS}
 * characters of notes.
 */
export function renderMarkdown(stored: StoredRun): string {
  const { run, machine: m } = stored;
  const budgeted = stored.figures.filter((f) => f.pass !== null);
  const missed = budgeted.filter((f) => f.pass === false);
  const lines: string[] = ['# Benchmark results', ''];
  lines.push(
    ...wrap(
      `Run ${run.startedAt} · mode **${run.mode}**${run.only ? ` (only: ${run.only.join(', ')})` : ''} · ${Math.round(run.totalSeconds)} s in total · ` +
        `${budgeted.length - missed.length} of ${budgeted.length} budgets met.`,
    ),
    '',
  );
  lines.push(...summaryLines(stored));
  lines.push(CHARTS_BLOCK_START, CHARTS_BLOCK_END, '');
  lines.push('## Figures', '', ...INTRO, '');
  for (const group of [...new Set(stored.figures.map((f) => f.group))]) {
    lines.push(
      ...groupTableLines(
        group,
        stored.figures.filter((f) => f.group === group),
      ),
    );
  }
  lines.push('## Notes by figure (method and measured causes)', '');
  for (const [group, notes] of Object.entries(stored.notes)) {
    lines.push(`### ${group}`, '');
    for (const note of notes) {
      // Tables and code blocks are kept as they are; prose is wrapped.
      if (note.startsWith('|') || note.startsWith('```')) lines.push(note);
      else lines.push(...wrap(note, WRAP_WIDTH, '- ', '  '));
    }
    lines.push('');
  }
  lines.push('## Machine and run', '');
  const facts = [
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}.`,
    `Load average at the end: ${m.loadAverageAtEnd.join(' / ')} (1/5/15 min). Other processes (test runs, builds) may share the 2 cores; figures are noisy to that extent.`,
    `Sizes: ${Object.entries(run.sizes)
      .map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`)
      .join(', ')}.`,
    `Seconds per figure module: ${Object.entries(stored.durationsSeconds)
      .map(([k, v]) => `${k} ${Math.round(v)}`)
      .join(', ')}.`,
    `1-minute load average before → after each module: ${Object.entries(stored.loadAverage)
      .map(([k, v]) => `${k} ${v.before.toFixed(1)}→${v.after.toFixed(1)}`)
      .join(', ')}.`,
  ];
  for (const fact of facts) lines.push(...wrap(fact, WRAP_WIDTH, '- ', '  '));
  lines.push('');
  return `${lines.join('\n')}\n`;
}

/** Writes `RESULTS.md` ({@link renderMarkdown}). */
export function writeMarkdown(file: string, stored: StoredRun): void {
  writeFileSync(file, renderMarkdown(stored));
}
