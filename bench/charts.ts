/**
 * `npm run bench:charts`: redraws the benchmark's SVG charts from a stored
 * `results.json` (no measuring) and embeds them in its RESULTS.md.
 * `npm run bench` calls the same code at its end.
 *
 *   npm run bench:charts                  bench/results.json → bench/latency.svg, bench/scale.svg
 *   npm run bench:charts -- --dir=bench/tmp   the charts of a --quick, --only or --accounts run
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeCharts } from './lib/charts';

const BENCH_DIR = import.meta.dirname;
const { values } = parseArgs({ options: { dir: { type: 'string' } } });
const written = await writeCharts({ dir: path.resolve(values.dir ?? BENCH_DIR), scalePointsFile: path.join(BENCH_DIR, 'scale-runs.json') });
console.log(`Wrote ${written.map((file) => path.relative(process.cwd(), file)).join(', ')}`);
