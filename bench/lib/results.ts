/**
 * The benchmark's results: every figure with its value, unit, budget and the
 * floor measured in the same run, written as `bench/results.json`
 * (machine-readable) and `bench/RESULTS.md` (a readable table).
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
    const extra = figure.extra ? `  ${Object.entries(figure.extra).map(([k, v]) => `${k}=${v}`).join(' ')}` : '';
    console.log(`  ${mark} ${figure.group} / ${figure.name}: ${formatValue(figure.value, figure.unit)}${figure.budget ? ` (budget ${figure.budget.text})` : ''}${extra}`);
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

function machine() {
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

/** Writes `results.json`. */
export function writeJson(file: string, results: Results, run: RunInfo): void {
  const body = {
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
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** Writes `RESULTS.md`: the table, the misses with their measured causes, method and machine. */
export function writeMarkdown(file: string, results: Results, run: RunInfo, intro: string[]): void {
  const m = machine();
  const lines: string[] = [];
  const missed = results.figures.filter((f) => f.pass === false);
  const budgeted = results.figures.filter((f) => f.pass !== null);
  lines.push('# Benchmark results', '');
  lines.push(
    `Run ${run.startedAt} · mode **${run.mode}**${run.only ? ` (only: ${run.only.join(', ')})` : ''} · ${Math.round(run.totalSeconds)} s in total · ` +
      `${budgeted.length - missed.length} of ${budgeted.length} budgets met.`,
    '',
  );
  lines.push(...intro, '');
  lines.push('| group | figure | value | budget | floor (same run) | result | also |', '|---|---|---:|---|---|:---:|---|');
  for (const f of results.figures) {
    const floor = f.floor ? `${formatValue(f.floor.value, f.floor.unit)} (${f.floor.what})` : '';
    const result = f.pass === null ? 'reported' : f.pass ? 'pass' : '**MISS**';
    const extra = f.extra ? Object.entries(f.extra).map(([k, v]) => `${k} ${typeof v === 'number' ? formatValue(v, '') : v}`).join('; ') : '';
    lines.push(
      `| ${escapeCell(f.group)} | ${escapeCell(f.name)} | ${formatValue(f.value, f.unit)} | ${escapeCell(f.budget?.text ?? '—')} | ${escapeCell(floor || '—')} | ${result} | ${escapeCell([extra, f.note ?? ''].filter(Boolean).join('; '))} |`,
    );
  }
  lines.push('');
  if (missed.length > 0) {
    lines.push('## Misses', '');
    const groups = [...new Set(missed.map((f) => f.group))];
    for (const group of groups) {
      const inGroup = results.figures.filter((f) => f.group === group && f.pass !== null);
      const missedInGroup = missed.filter((f) => f.group === group);
      lines.push(
        `- **${group}**: ${missedInGroup.length} of ${inGroup.length} — ${missedInGroup.map((f) => `${f.name} ${formatValue(f.value, f.unit)}${new Set(missedInGroup.map((m) => m.budget!.text)).size > 1 ? ` (budget ${f.budget!.text})` : ''}`).join('; ')}${new Set(missedInGroup.map((m) => m.budget!.text)).size > 1 ? '' : ` (budget ${missedInGroup[0]!.budget!.text})`}. Measured cause under "${group}" below.`,
      );
    }
    lines.push('');
  }
  lines.push('## Notes by figure (method and measured causes)', '');
  for (const [group, notes] of results.notes) {
    lines.push(`### ${group}`, '');
    for (const note of notes) lines.push(note.startsWith('|') || note.startsWith('```') ? note : `- ${note}`);
    lines.push('');
  }
  lines.push('## Machine and run', '');
  lines.push(`- ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}.`);
  lines.push(`- Load average at the end: ${m.loadAverageAtEnd.join(' / ')} (1/5/15 min). Other processes (test runs, builds) may share the 2 cores; figures are noisy to that extent.`);
  lines.push(`- Sizes: ${Object.entries(run.sizes).map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`).join(', ')}.`);
  lines.push(`- Seconds per figure module: ${Object.entries(results.durations).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}.`);
  lines.push(
    `- 1-minute load average before → after each module: ${Object.entries(results.load)
      .map(([k, v]) => `${k} ${v.before.toFixed(1)}→${v.after.toFixed(1)}`)
      .join(', ')}.`,
  );
  lines.push('');
  writeFileSync(file, `${lines.join('\n')}\n`);
}
