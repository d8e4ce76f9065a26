/**
 * A full garbage collection before a measured window (V8's `gc`, exposed at
 * run time): the garbage earlier figures left in this process (a history
 * laid out, a 100,000-account campaign written) is otherwise collected in
 * whichever request is measured next, on V8's helper threads too, which
 * `process.cpuUsage` counts.
 */
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** {@link gc}, then 100 ms for V8's concurrent sweeping to finish before the measured window starts. */
export const collectGarbage = async (): Promise<void> => {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
};

/** Major (mark-compact) collections of this process since {@link majorCollections} was first called, and their pauses (ms). */
const majors = { count: 0, ms: 0 };
let observer: PerformanceObserver | undefined;

/**
 * How many major collections this process has run (and their pause time,
 * ms) since the first call: a measured block reads it before and after, to
 * show how many fell in it (the page figures: each of V8's full collections
 * of the bench process's heap costs more than the read it fell in). Read it
 * after {@link settleCollections}: V8 reports each collection a moment after it.
 */
export function majorCollections(): { count: number; ms: number } {
  if (!observer) {
    observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries())
        if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
          majors.count++;
          majors.ms += entry.duration;
        }
    });
    observer.observe({ entryTypes: ['gc'] });
  }
  return { ...majors };
}

/** Waits (20 ms, outside any measured window) until V8 has reported the collections of the window that just ended. */
export const settleCollections = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

/** What {@link timedBlock} measured. */
export interface TimedBlock {
  /** CPU-seconds of this process per call, the calls' own time only (the preparation of each call not counted). */
  cpuS: number;
  /** Major collections that fell in the block ({@link majorCollections}). */
  majors: number;
}

/**
 * A block of `calls` calls timed after a full collection ({@link collectGarbage}), so the garbage of what ran
 * before is not charged to it: each call is prepared (`prepare`, untimed) and then run (timed by
 * `process.cpuUsage`). What the page figures time (bench/figures/results.ts, privacy.ts).
 */
export async function timedBlock(calls: number, prepare: () => () => Promise<unknown>): Promise<TimedBlock> {
  await collectGarbage();
  const before = majorCollections().count;
  let used = 0;
  for (let i = 0; i < calls; i++) {
    const call = prepare();
    const cpu = process.cpuUsage();
    await call();
    const spent = process.cpuUsage(cpu);
    used += (spent.user + spent.system) / 1e6;
  }
  await settleCollections();
  return { cpuS: used / calls, majors: majorCollections().count - before };
}
