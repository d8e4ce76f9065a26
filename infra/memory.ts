/**
 * Memory (MB) of each Lambda function, chosen from `npm run bench`
 * measurements (docs/deploy.md "Memory"). Lambda gives a function CPU in
 * proportion to its memory (1,769 MB = one vCPU), so for CPU-bound work the
 * GB-seconds, and the bill, stay the same up to 1,769 MB while the time
 * shrinks; for work that mostly waits on DynamoDB, more memory only costs.
 */

/** Memory every function gets unless listed in {@link FUNCTION_MEMORY_MB}. */
export const DEFAULT_MEMORY_MB = 1024;

/** One full vCPU: the functions whose invocations are CPU-bound and large (docs/deploy.md "Memory"). */
const ONE_VCPU_MB = 1769;

/** Functions whose memory differs from {@link DEFAULT_MEMORY_MB}, by function ID. */
export const FUNCTION_MEMORY_MB: Readonly<Record<string, number>> = {
  CampaignsEnrich: ONE_VCPU_MB,
  CampaignsExport: ONE_VCPU_MB,
};

/** Memory (MB) of the function with construct ID `functionId`. */
export const memoryOf = (functionId: string): number => FUNCTION_MEMORY_MB[functionId] ?? DEFAULT_MEMORY_MB;

/**
 * V8 settings (`NODE_OPTIONS`) of functions whose peak memory is budgeted,
 * by function ID. The export streams ~230 MB of CSV for 1,000,000 rows
 * through 1 MiB Buffers; a 2 MB young-generation semi-space makes V8's
 * scavenger run often enough to free the dead Buffers early (`npm run
 * bench:export`, same machine, back to back: peak RSS 179 → 167 MB, V8 heap
 * 34 → 21 MB, CPU-seconds unchanged within noise). Issue #13 budget: ≤ 200 MB.
 * The results stream writes a whole result the same way (a few MB of JSON
 * Lines a second through 64 KB chunks), under the budget that its peak
 * memory stays flat whatever the result's size (bench `results`).
 */
export const FUNCTION_NODE_OPTIONS: Readonly<Record<string, string>> = {
  CampaignsExport: '--max-semi-space-size=2',
  CampaignsResultsStream: '--max-semi-space-size=2',
};

/** `NODE_OPTIONS` of the function with construct ID `functionId`, if it has any. */
export const nodeOptionsOf = (functionId: string): string | undefined => FUNCTION_NODE_OPTIONS[functionId];
