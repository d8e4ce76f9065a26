/**
 * `--test` on every operator command that acts on an organization
 * (docs/test-mode.md): it acts on the organization's test twin, leaves the
 * live organization alone, and prints the live ID wherever it prints one.
 * Run through the CLI's program in this process (test/support/ops.ts).
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testOrganizationIdOf } from '../lib/ids';
import { accountHistory, ledger } from '../lib/root';
import { COMMANDS } from '../infra/ops/commands';
import { call, newOrganization, useApi } from './support/api';
import { opsInProcess, opsJson } from './support/ops';

const api = useApi();
const dir = mkdtempSync(path.join(tmpdir(), 'ops-test-mode-'));

describe('--test on the operator commands', () => {
  it('every command with --org takes --test', () => {
    const withOrg = COMMANDS.filter((c) => c.name !== 'org:create' && c.examples.some((e) => e.includes('--org')));
    // Every such command, whatever commands join later; these at least.
    expect(withOrg.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'campaign:import',
        'credits:reconcile',
        'crm:import',
        'key:create',
        'key:list',
        'org:capacity',
        'org:credits',
        'org:limits',
      ]),
    );
    return Promise.all(
      withOrg.map(async (c) => {
        const help = await opsInProcess([c.name, '--help']);
        expect(help.stdout, c.name).toMatch(/--test/);
      }),
    );
  });

  it('org:limits, org:credits, org:capacity, crm:import and credits:reconcile act on the twin and name the live ID', async () => {
    const live = await newOrganization({ smbCredits: 40, maxEnrichingAccounts: 70 });
    const twin = testOrganizationIdOf(live.organizationId);
    const { apiKey: testKey } = await opsJson(['key:create', '--org', live.organizationId, '--test']);

    expect(
      await opsJson(['org:limits', '--org', live.organizationId, '--test', '--monthly-spend', '500', '--requests', '7']),
    ).toMatchObject({ requests: { limit: 7 }, monthlySpend: { limit: 500 } });
    expect((await call(api(), '/v1/org/limits', { apiKey: testKey })).data).toMatchObject({
      requests: { limit: 7 },
      monthlySpend: { limit: 500 },
    });
    expect((await call(api(), '/v1/org/limits', { apiKey: live.apiKey })).data).toMatchObject({ monthlySpend: { limit: null } });

    const before = (await call(api(), '/v1/org/describe', { apiKey: testKey })).data.credits.smb as number;
    expect(await opsJson(['org:credits', '--org', live.organizationId, '--test', '--add', '25'])).toMatchObject({
      organizationId: live.organizationId,
      smb: before + 25,
    });
    expect((await call(api(), '/v1/org/describe', { apiKey: live.apiKey })).data.credits.smb).toBe(40);

    expect(await opsJson(['org:capacity', '--org', live.organizationId, '--test', '--max-enriching', '33'])).toMatchObject({
      maxEnrichingAccounts: 33,
    });
    expect((await call(api(), '/v1/org/describe', { apiKey: live.apiKey })).data.enrichment.maxEnrichingAccounts).toBe(70);

    const crm = path.join(dir, 'crm.txt');
    writeFileSync(crm, 'test_found_crm_1\ntest_found_crm_2\n');
    expect(await opsJson(['crm:import', '--org', live.organizationId, '--test', crm])).toEqual({ added: 2 });
    const [twinFacts, liveFacts] = await Promise.all(
      [twin, live.organizationId].map((id) => accountHistory().getFacts(id, ['test_found_crm_1'])),
    );
    expect([twinFacts!.get('test_found_crm_1')?.crmTarget, liveFacts!.get('test_found_crm_1')?.crmTarget ?? false]).toEqual([true, false]);

    const reconciled = await opsJson(['credits:reconcile', '--org', live.organizationId, '--test']);
    expect(reconciled).toMatchObject({ organizations: 1, drift: [] });
    expect(await ledger().audit(twin)).toMatchObject({ balance: before + 25, ledgerSum: before + 25 });
    const usage = await opsInProcess(['credits:reconcile', '--test']);
    expect([usage.code, usage.stdout]).toEqual([2, '']);
    expect(usage.stderr).toMatch(/--test needs --org/);
  });

  it('--test with an unknown organization fails and creates nothing', async () => {
    const run = await opsInProcess(['org:limits', '--org', 'org_4fJ8kQ2mN7pR9sT3vW5xY', '--test', '--requests', '5']);
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toMatch(/organization/);
  });
});
