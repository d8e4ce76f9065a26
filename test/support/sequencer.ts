/**
 * The order test files start in (vitest.config.ts `sequence.sequencer`):
 * longest first, by the durations of test/durations.json (a full run's,
 * written by `npm run test:durations -- <vitest JSON report>`). With two
 * workers taking the next file as they free up, the files that spawn
 * `npm start` or the CLI (minutes under load) then start at once instead of
 * last, and no long file runs alone at the end (README.md "How it works", `test/`).
 *
 * A file missing from the list (new since it was written) takes vitest's own
 * cached duration when there is one, else the median of the list.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Where the durations are kept, relative to the project root. */
export const DURATIONS_FILE = 'test/durations.json';

/** Seconds each test file took in the recorded run, by path relative to the project root. */
export type TestDurations = Record<string, number>;

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const recorded = JSON.parse(readFileSync(path.join(root, DURATIONS_FILE), 'utf8')) as TestDurations;
    const known = Object.values(recorded).sort((a, b) => a - b);
    const median = known.length > 0 ? known[Math.floor(known.length / 2)]! : 0;
    const durationOf = (spec: TestSpecification): number => {
      const recordedSeconds = recorded[path.relative(root, spec.moduleId).split(path.sep).join('/')];
      if (recordedSeconds !== undefined) return recordedSeconds;
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      return cached ? cached.duration / 1000 : median;
    };
    const seconds = new Map(files.map((spec) => [spec, durationOf(spec)]));
    return [...files].sort((a, b) => seconds.get(b)! - seconds.get(a)!);
  }
}
