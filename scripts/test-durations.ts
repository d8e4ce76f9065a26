/**
 * `npm run test:durations -- REPORT.json`: writes test/durations.json, the
 * seconds each test file took, from a vitest JSON report of a full run
 * (`npx vitest run --reporter=json --outputFile.json=REPORT.json`). The test
 * sequencer (test/support/sequencer.ts) starts the longest files first.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DURATIONS_FILE, type TestDurations } from '../test/support/sequencer';

const ROOT = path.resolve(import.meta.dirname, '..');
const [reportFile] = process.argv.slice(2);
if (!reportFile) {
  console.error('usage: npm run test:durations -- REPORT.json (a vitest JSON report of a full run)');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
const durations: TestDurations = Object.fromEntries(
  report.testResults
    .map((file) => {
      // The report names files absolutely, from wherever the run was: keep the part from `test/` on.
      const relative = file.name.split(path.sep).join('/');
      return [relative.slice(relative.lastIndexOf('/test/') + 1), Math.round((file.endTime - file.startTime) / 100) / 10] as const;
    })
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
);
writeFileSync(path.join(ROOT, DURATIONS_FILE), `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${DURATIONS_FILE}: ${Object.keys(durations).length} files`);
