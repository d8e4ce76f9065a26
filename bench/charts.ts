/**
 * `npm run bench:charts`: redraws the benchmark's SVG charts from a stored
 * `results.json` (no measuring) and embeds them in its RESULTS.md.
 * `npm run bench` calls the same code at its end.
 *
 *   npm run bench:charts                  bench/results.json → bench/latency.svg, bench/scale.svg
 *   npm run bench:charts -- --dir=bench/tmp   the charts of a --quick, --only or --accounts run
 *   npm run bench:charts -- --markdown    first re-render RESULTS.md itself from results.json
 *                                         (bench/lib/results.ts renderMarkdown; nothing is measured)
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { writeCharts } from './lib/charts';
import { writeMarkdown, type StoredRun } from './lib/results';

const BENCH_DIR = import.meta.dirname;
const { values } = parseArgs({ options: { dir: { type: 'string' }, markdown: { type: 'boolean', default: false } } });
const dir = path.resolve(values.dir ?? BENCH_DIR);
if (values.markdown)
  writeMarkdown(path.join(dir, 'RESULTS.md'), JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as StoredRun);
const written = await writeCharts({ dir, scalePointsFile: path.join(BENCH_DIR, 'scale-runs.json') });
console.log(`Wrote ${written.map((file) => path.relative(process.cwd(), file)).join(', ')}`);
