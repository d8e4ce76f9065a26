/**
 * Scale points: the scale figures (launch evaluation, workflow, export) of
 * one run at one campaign size, kept across runs in `bench/scale-runs.json`
 * so the charts can draw each figure against the campaign size. A full
 * `npm run bench` adds the 100,000-account point; `npm run bench --
 * --only=scale --accounts=N` adds (or replaces) the point at N.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** A figure as `results.json` stores it (bench/lib/results.ts `writeJson`). */
export interface StoredFigure {
  group: string;
  name: string;
  value: number | null;
  unit: string;
  budget: { op: '<=' | '>='; limit: number; text: string } | null;
  floor: { value: number; unit: string; what: string } | null;
  extra?: Record<string, number | string>;
}

/** The parts of `results.json` the charts read. */
export interface StoredResults {
  run: { mode: 'full' | 'quick'; only: string[] | null; startedAt: string; sizes: Record<string, number> };
  figures: StoredFigure[];
}

/** Seconds (or MB) measured, the floor of the same run and the budget, at one size. */
export interface ScaleMeasure {
  value: number;
  floor: number | null;
  budget: number | null;
}

/** The scale figures of one run. */
export interface ScalePoint {
  accounts: number;
  contactsPerAccount: number;
  /** When the run started (ISO 8601). */
  startedAt: string;
  /** Enrich call until its response, seconds. */
  launchSeconds: ScaleMeasure;
  /** Enrich call until get answers `enriched`, seconds (the floor and budget converted from accounts/s). */
  workflowSeconds: ScaleMeasure;
  /** Export call until the presigned URL, seconds. */
  exportSeconds: ScaleMeasure;
  /** Peak RSS of the export process, MB (floor: RSS after the bundle import). */
  exportPeakRssMB: ScaleMeasure;
}

const find = (figures: StoredFigure[], group: string, name: RegExp) =>
  figures.find((f) => f.group === group && name.test(f.name) && f.value !== null);

const measure = (figure: StoredFigure): ScaleMeasure => ({
  value: figure.value!,
  floor: figure.floor?.value ?? null,
  budget: figure.budget?.limit ?? null,
});

/**
 * The scale point of a run, if the run measured the scale figures (and was
 * not a `--quick` smoke run).
 */
export function scalePointOf(results: StoredResults): ScalePoint | undefined {
  if (results.run.mode === 'quick') return undefined;
  const launch = find(results.figures, 'launch evaluation', /until response$/);
  const workflow = find(results.figures, 'enrichment workflow', /enrich call → get answers enriched$/);
  const exported = find(results.figures, 'export', /→ presigned URL$/);
  const rss = find(results.figures, 'export', /peak RSS/);
  if (!launch || !workflow || !exported || !rss) return undefined;
  const accounts = results.run.sizes.accounts!;
  // The workflow figure is a rate (accounts/s); as a time it reads like the others.
  const seconds = (rate: number | null | undefined) => (rate ? accounts / rate : null);
  return {
    accounts,
    contactsPerAccount: results.run.sizes.contactsPerAccount ?? 0,
    startedAt: results.run.startedAt,
    launchSeconds: measure(launch),
    workflowSeconds: { value: seconds(workflow.value)!, floor: seconds(workflow.floor?.value), budget: seconds(workflow.budget?.limit) },
    exportSeconds: measure(exported),
    exportPeakRssMB: measure(rss),
  };
}

/** The stored points, by campaign size. */
export function readScalePoints(file: string): ScalePoint[] {
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, 'utf8')) as { points: ScalePoint[] }).points;
}

/**
 * Points with `point` added: it replaces a stored point of the same size
 * unless that one is newer. Sorted by size.
 */
export function withPoint(points: readonly ScalePoint[], point: ScalePoint | undefined): ScalePoint[] {
  if (!point) return [...points];
  const same = points.find((p) => p.accounts === point.accounts);
  const keep = same && same.startedAt > point.startedAt ? same : point;
  return [...points.filter((p) => p.accounts !== point.accounts), keep].sort((a, b) => a.accounts - b.accounts);
}

/** Writes the points file (sorted by size). */
export function writeScalePoints(file: string, points: readonly ScalePoint[]): void {
  writeFileSync(file, `${JSON.stringify({ points: [...points].sort((a, b) => a.accounts - b.accounts) }, null, 2)}\n`);
}
