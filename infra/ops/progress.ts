/**
 * Progress bars of long CLI work (imports), on stderr and only when stderr
 * is a terminal (README.md#operator-cli): stdout keeps exactly one JSON object, and a
 * redirected or piped stderr gets no control characters.
 */
import { SingleBar, Presets } from 'cli-progress';
import type { ProgressReporter } from './command';

const NO_PROGRESS: ProgressReporter = { start() {}, update() {}, stop() {} };

/** Formats units for the bar: bytes as MB, anything else as a plain count. */
const amount = (value: number, unit: string) =>
  unit === 'bytes' ? `${(value / 1_000_000).toFixed(1)} MB` : `${value.toLocaleString('en-US')} ${unit}`;

/**
 * A reporter drawing one bar at a time with cli-progress.
 * @param stream - where bars go; bars are drawn only if it is a TTY.
 */
export function createProgress(stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  if (!stream.isTTY) return NO_PROGRESS;
  let bar: SingleBar | undefined;
  let unit = '';
  return {
    start(label, total, unitName) {
      bar?.stop();
      unit = unitName;
      bar = new SingleBar(
        {
          stream,
          format: `${label.padEnd(12)} [{bar}] {percentage}% | {done} of {all} | {duration_formatted}, eta {eta_formatted}`,
          hideCursor: true,
          etaBuffer: 20,
        },
        Presets.shades_classic,
      );
      bar.start(Math.max(total, 1), 0, { done: amount(0, unit), all: amount(total, unit) });
    },
    update(done) {
      bar?.update(done, { done: amount(done, unit) });
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
