/**
 * Small statistics helpers shared by the figures (values in whatever unit
 * the caller measured, usually milliseconds).
 */

/** Percentile `p` (0..100) of already sorted values, nearest-rank. */
export function percentileOfSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Summary of a sample of latencies (ms). */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Summarizes a sample (any order). */
export function summarize(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    count: sorted.length,
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p99: percentileOfSorted(sorted, 99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Median of a sample. */
export const median = (values: readonly number[]): number =>
  percentileOfSorted(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Rounds to `digits` decimals (for reports). */
export const round = (value: number, digits = 2): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

/**
 * A uniformly random permutation of `items` (Fisher–Yates), leaving
 * `items` as it is. The interleaved figures draw each round's order with it,
 * so no task always runs right after the same neighbour.
 * @param random - a source of uniform numbers in [0, 1).
 */
export function shuffled<T>(items: readonly T[], random: () => number = Math.random): T[] {
  const order = [...items];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * `values` sorted ascending, each rounded to `digits` (default 2), joined by `separator` (default a space): how a figure
 * shows the spread of its samples (ratios; the history module's per-run CPU ms and changes, 1 digit, comma-separated).
 */
export const sortedRounded = (values: readonly number[], digits = 2, separator = ' '): string =>
  [...values]
    .sort((a, b) => a - b)
    .map((value) => round(value, digits))
    .join(separator);

/** One slice of a measured window: its length, this process's event-loop busy share (0..1) and DynamoDB Local's cores over it. */
export interface BusySlice {
  seconds: number;
  /** Event-loop utilization of the slice (`performance.eventLoopUtilization`), 0..1. */
  loop: number;
  /** DynamoDB Local's CPU-seconds over the slice ÷ its length. */
  javaCores: number;
}

/**
 * How this process's event loop and DynamoDB Local shared a window, from
 * its slices: the loop's busy share over the whole window (time-weighted),
 * and the share of the window in slices where the loop was mostly idle
 * (below `idleBelow`) or nearly saturated (above `busyAbove`), each with
 * DynamoDB Local's mean cores in those slices. When the two alternate (one
 * busy while the other waits) the window is longer than either's CPU needs:
 * the enrichment workflow's Map batches run in step, all reading at once,
 * then all encoding at once (bench/README.md "Where the workflow's wall time
 * goes").
 * @returns shares 0..1 of the window's seconds; `NaN` cores for a class with no slice.
 */
export function busyAlternation(
  slices: readonly BusySlice[],
  { idleBelow = 0.5, busyAbove = 0.9 }: { idleBelow?: number; busyAbove?: number } = {},
) {
  const total = slices.reduce((sum, slice) => sum + slice.seconds, 0);
  const share = (picked: readonly BusySlice[]) => {
    const seconds = picked.reduce((sum, slice) => sum + slice.seconds, 0);
    return {
      share: total > 0 ? seconds / total : Number.NaN,
      javaCores: seconds > 0 ? picked.reduce((sum, slice) => sum + slice.javaCores * slice.seconds, 0) / seconds : Number.NaN,
    };
  };
  return {
    seconds: total,
    loopBusy: total > 0 ? slices.reduce((sum, slice) => sum + slice.loop * slice.seconds, 0) / total : Number.NaN,
    loopIdle: share(slices.filter((slice) => slice.loop < idleBelow)),
    loopSaturated: share(slices.filter((slice) => slice.loop > busyAbove)),
  };
}
