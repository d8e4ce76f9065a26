/**
 * The one list of data migrations (lib/migrations/index.ts; docs/architecture.md)
 * against DynamoDB Local: each runs once, in order, and is remembered, so a
 * restart reads one partition instead of running (and scanning) again.
 * Migrations with IDs unique to this test keep it apart from any other
 * test's records in the file's table (test/support/own-table.ts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ddb, s3 } from '../lib/aws';
import { config } from '../lib/config';
import { accountHistory } from '../lib/root';
import { MIGRATIONS, runMigrations, type Migration } from '../lib/migrations';

const deps = () => ({ client: ddb, tableName: config.tableName, history: accountHistory(), s3: s3(), bucketName: config.bucketName });

/** Migrations that log their runs, with IDs of their own. */
function counted(names: string[]): { migrations: Migration[]; runs: string[] } {
  const runs: string[] = [];
  const prefix = randomUUID();
  return {
    runs,
    migrations: names.map((name) => ({ id: `${prefix}-${name}`, summary: name, run: async () => (runs.push(name), { changed: 1 }) })),
  };
}

describe('data migrations', () => {
  it('the list has unique IDs in one fixed order', () => {
    const ids = MIGRATIONS.map((migration) => migration.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort());
  });

  it('runs each migration once, in order, and skips the recorded ones on the next run', async () => {
    const { migrations, runs } = counted(['a', 'b', 'c']);
    const first = await runMigrations(deps(), { migrations });
    expect(runs).toEqual(['a', 'b', 'c']);
    expect(first.ran.map((r) => r.id)).toEqual(migrations.map((m) => m.id));
    const second = await runMigrations(deps(), { migrations });
    expect(runs).toEqual(['a', 'b', 'c']);
    expect(second.ran).toEqual([]);
    expect(second.skipped).toEqual(migrations.map((m) => m.id));
  });

  it('a migration appended later runs alone; --force runs them all again', async () => {
    const { migrations, runs } = counted(['a', 'b']);
    await runMigrations(deps(), { migrations: migrations.slice(0, 1) });
    await runMigrations(deps(), { migrations });
    expect(runs).toEqual(['a', 'b']);
    await runMigrations(deps(), { migrations, force: true });
    expect(runs).toEqual(['a', 'b', 'a', 'b']);
  });

  it('a failing migration stops the run; the ones before it stay recorded and it runs again next time', async () => {
    const { migrations, runs } = counted(['a', 'b']);
    let fail = true;
    const failing: Migration = {
      id: `${migrations[0]!.id}-failing`,
      summary: 'fails once',
      run: async () => {
        if (fail) throw new Error('boom');
        runs.push('failing');
        return {};
      },
    };
    const list = [migrations[0]!, failing, migrations[1]!];
    await expect(runMigrations(deps(), { migrations: list })).rejects.toThrow('boom');
    expect(runs).toEqual(['a']);
    fail = false;
    const again = await runMigrations(deps(), { migrations: list });
    expect(runs).toEqual(['a', 'failing', 'b']);
    expect(again.skipped).toEqual([migrations[0]!.id]);
  });
});
