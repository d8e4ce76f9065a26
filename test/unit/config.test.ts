/**
 * Unit tests of the settings module (lib/config.ts; README.md#set-up): integer
 * settings refuse, naming the variable, what is not an integer in their range.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  config,
  setting,
  SETTINGS,
  exportUrlTtlSecondsSetting,
  receiptPublishedKeyIdsSetting,
  tableNameSetting,
  type SettingName,
} from '../../lib/config';

const saved = {
  RECONCILE_EVERY_SECONDS: process.env.RECONCILE_EVERY_SECONDS,
  EXPORT_URL_TTL_SECONDS: process.env.EXPORT_URL_TTL_SECONDS,
  RECEIPT_PUBLISHED_KEY_IDS: process.env.RECEIPT_PUBLISHED_KEY_IDS,
  TABLE_NAME: process.env.TABLE_NAME,
};

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

describe('setting: one declaration read on its own (what Lambda bundles import)', () => {
  it('reads each declaration as config reads the setting of the same name', () => {
    process.env.EXPORT_URL_TTL_SECONDS = '120';
    process.env.RECEIPT_PUBLISHED_KEY_IDS = ' k1, ,k2 ';
    process.env.TABLE_NAME = 'settings-test-table';
    expect(setting(exportUrlTtlSecondsSetting)).toBe(120);
    expect(setting(receiptPublishedKeyIdsSetting)).toEqual(['k1', 'k2']);
    expect(setting(tableNameSetting)).toBe('settings-test-table');
    for (const name of Object.keys(SETTINGS) as SettingName[]) {
      let direct: unknown, proxied: unknown;
      try {
        direct = setting(SETTINGS[name]);
      } catch (error) {
        direct = (error as Error).message;
      }
      try {
        proxied = config[name];
      } catch (error) {
        proxied = (error as Error).message;
      }
      expect(direct, name).toEqual(proxied);
    }
  });

  it('refuses a value out of bounds, naming the variable, as config does', () => {
    process.env.EXPORT_URL_TTL_SECONDS = '-1';
    expect(() => setting(exportUrlTtlSecondsSetting)).toThrow(
      'Environment variable EXPORT_URL_TTL_SECONDS must be a non-negative integer, got "-1"',
    );
    delete process.env.TABLE_NAME;
    expect(() => setting(tableNameSetting)).toThrow('Environment variable TABLE_NAME is not set');
  });
});
