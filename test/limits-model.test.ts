/**
 * Removing a limit removes it (docs/limits.md, "Removing a limit"): a model
 * test of random sequences of `org:limits --monthly-spend N|none` and
 * `--low-balance N|none`, run through the operator CLI's own program
 * (commander's parsing included, in this process, against the test run's
 * table), interleaved with launches through HTTP. Every launch gets the
 * answer the model predicts: 200, or 402 `insufficient_credits` /
 * `spend_limit_exceeded`; never 409 `enrichment_pending` (the lockout an
 * attribute stored as `""` caused). Also: an organization whose item still
 * holds `""` (written by the old CLI) launches.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { monthOf } from '../lib/organizations/limits';
import { limits } from '../lib/root';
import { newOrganization, useApi } from './support/api';
import { opsJson } from './support/ops';
import { activeAccounts, balance, createApiCampaign, enrich, importAccounts, uniquePrefix } from './enrichment/support';

const api = useApi();

/** Runs `ops org:limits` in this process; answers the printed limits. */
const orgLimits = (organizationId: string, args: string[]): Promise<any> => opsJson(['org:limits', '--org', organizationId, ...args]);

/** A draft of `size` active accounts with one contact each (found: no refund, so the month's spend only grows). */
async function draftOf(apiKey: string, size: number): Promise<string> {
  const list = activeAccounts(uniquePrefix(), size);
  await importAccounts(list);
  return createApiCampaign(
    api(),
    apiKey,
    list.map((a) => a.accountId),
  );
}

type Step =
  { kind: 'monthlySpend'; value: number | null } | { kind: 'lowBalance'; value: number | null } | { kind: 'launch'; size: number };

const limitValue = fc.option(fc.integer({ min: 0, max: 12 }), { nil: null, freq: 2 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('monthlySpend' as const), value: limitValue }),
  fc.record({ kind: fc.constant('lowBalance' as const), value: limitValue }),
  fc.record({ kind: fc.constant('launch' as const), size: fc.integer({ min: 1, max: 4 }) }),
);

describe('org:limits set and unset, interleaved with launches (model)', () => {
  it('every launch answers what the model says: 200, insufficient_credits or spend_limit_exceeded, never enrichment_pending', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 8 }), fc.integer({ min: 4, max: 14 }), async (steps, credits) => {
        const org = await newOrganization({ smbCredits: credits });
        const model = { balance: credits, spent: 0, monthlySpend: null as number | null, lowBalance: null as number | null };
        for (const s of steps) {
          if (s.kind === 'monthlySpend' || s.kind === 'lowBalance') {
            const printed = await orgLimits(org.organizationId, [
              s.kind === 'monthlySpend' ? '--monthly-spend' : '--low-balance',
              s.value === null ? 'none' : String(s.value),
            ]);
            model[s.kind] = s.value;
            expect(printed).toMatchObject({
              monthlySpend: { limit: model.monthlySpend, spent: model.spent },
              lowBalanceThreshold: model.lowBalance,
            });
            continue;
          }
          const campaignId = await draftOf(org.apiKey, s.size);
          const res = await enrich(api(), org.apiKey, campaignId);
          const expected =
            s.size > model.balance
              ? 'insufficient_credits'
              : model.monthlySpend !== null && model.spent + s.size > model.monthlySpend
                ? 'spend_limit_exceeded'
                : 'launched';
          expect(res.status === 200 ? 'launched' : res.error?.code, `${JSON.stringify(steps)} → ${JSON.stringify(res.body)}`).toBe(
            expected,
          );
          if (expected === 'launched') {
            model.balance -= s.size;
            model.spent += s.size;
          }
        }
        expect(await balance(org.organizationId)).toBe(model.balance);
        expect(await limits().spent(org.organizationId, monthOf(new Date()))).toBe(model.spent);
      }),
      { numRuns: 8 },
    );
  });

  it('a launch after set-then-remove succeeds, for each limit and through the CLI', async () => {
    for (const flag of ['--monthly-spend', '--low-balance']) {
      const org = await newOrganization({ smbCredits: 20 });
      await orgLimits(org.organizationId, [flag, '1']);
      await orgLimits(org.organizationId, [flag, 'none']);
      const res = await enrich(api(), org.apiKey, await draftOf(org.apiKey, 3));
      expect(res.status, `${flag}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });

  it('an organization whose item holds "" for a limit (written by an older CLI) reads no limit and launches', async () => {
    const org = await newOrganization({ smbCredits: 20 });
    await ddb.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.organization(org.organizationId),
        UpdateExpression: 'SET monthlySpendLimit = :empty, lowBalanceThreshold = :empty',
        ExpressionAttributeValues: { ':empty': '' },
      }),
    );
    expect(await limits().limits(org.organizationId)).toMatchObject({ monthlySpendLimit: null, lowBalanceThreshold: null });
    const res = await enrich(api(), org.apiKey, await draftOf(org.apiKey, 3));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('the store refuses a value that is neither a whole number nor null, naming the field, and writes nothing', async () => {
    const org = await newOrganization({ smbCredits: 20 });
    await limits().setLimits(org.organizationId, { monthlySpendLimit: 7 });
    await expect(limits().setLimits(org.organizationId, { monthlySpendLimit: '' as unknown as number })).rejects.toThrow(
      /monthlySpendLimit/,
    );
    await expect(limits().setLimits(org.organizationId, { lowBalanceThreshold: -1, monthlySpendLimit: null })).rejects.toThrow(
      /lowBalanceThreshold/,
    );
    expect(await limits().limits(org.organizationId)).toMatchObject({ monthlySpendLimit: 7, lowBalanceThreshold: null });
  });
});
