/**
 * Unit tests of the settings module (lib/config.ts; README.md#set-up): integer
 * settings refuse, naming the variable, what is not an integer in their range.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { config } from '../../lib/config';

const saved = { RECONCILE_EVERY_SECONDS: process.env.RECONCILE_EVERY_SECONDS, EXPORT_URL_TTL_SECONDS: process.env.EXPORT_URL_TTL_SECONDS };

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('integer settings', () => {
  it('RECONCILE_EVERY_SECONDS: 30 when unset, accepted from 1 to 86,400, refused outside (Node timers wrap past 2^31 ms)', () => {
    delete process.env.RECONCILE_EVERY_SECONDS;
    expect(config.localReconcileEverySeconds).toBe(30);
    for (const ok of ['1', '3600', '86400']) {
      process.env.RECONCILE_EVERY_SECONDS = ok;
      expect(config.localReconcileEverySeconds).toBe(Number(ok));
    }
    for (const bad of ['0', '86401', '3000000', '1.5', 'soon']) {
      process.env.RECONCILE_EVERY_SECONDS = bad;
      expect(() => config.localReconcileEverySeconds, bad).toThrow(
        `Environment variable RECONCILE_EVERY_SECONDS must be an integer from 1 to 86400, got "${bad}"`,
      );
    }
  });

  it('a setting without bounds refuses only negative and non-integer values', () => {
    process.env.EXPORT_URL_TTL_SECONDS = '0';
    expect(config.exportUrlTtlSeconds).toBe(0);
    for (const bad of ['-1', '2.5', 'x']) {
      process.env.EXPORT_URL_TTL_SECONDS = bad;
      expect(() => config.exportUrlTtlSeconds, bad).toThrow(
        `Environment variable EXPORT_URL_TTL_SECONDS must be a non-negative integer, got "${bad}"`,
      );
    }
  });
});
