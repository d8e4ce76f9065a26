/**
 * A full garbage collection before a measured window (V8's `gc`, exposed at
 * run time): the garbage earlier figures left in this process (a history
 * laid out, a 100,000-account campaign written) is otherwise collected in
 * whichever request is measured next, on V8's helper threads too, which
 * `process.cpuUsage` counts.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** {@link gc}, then 100 ms for V8's concurrent sweeping to finish before the measured window starts. */
export const collectGarbage = async (): Promise<void> => {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
};
