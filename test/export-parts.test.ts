/**
 * Export through HTTP from result parts in both layouts
 * (lib/results/parts.ts): parts written by ResultStore.putPart as the
 * workflow writes them, and parts of the former JSON-lines layout (results
 * enriched before a deployment, kept for one access period). Each file is
 * downloaded through its presigned URL and compared byte for byte with what
 * the former encoder writes for the same accounts and selection
 * (test/support/export-oracle.ts). Campaign items are written straight to
 * the table, the parts straight to the local S3 endpoint.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { faker } from '@faker-js/faker';
import { customAlphabet } from 'nanoid';
import { describe, expect, it } from 'vitest';
import { s3 } from '../lib/aws';
import { accountListKey } from '../lib/account-lists/account-list';
import { config } from '../lib/config';
import { resultsPrefix } from '../lib/results/parts';
import type { EnrichedAccount } from '../lib/results/csv';
import { newCampaignId } from '../lib/ids';
import { campaigns, results } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import { oracleExport } from './support/export-oracle';
import { objectKeys } from '../lib/objects';
import { missingAccount, blankContact } from '../lib/warehouse/schema';

const api = useApi();
const attemptSuffix = customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21);

/** Accounts with hostile cells among realistic ones (formula starts, E.164 and other phones, quotes, commas, line breaks, U+2028). */
function accounts(count: number, seed: number): EnrichedAccount[] {
  faker.seed(seed);
  const odd = () =>
    faker.helpers.arrayElement([
      '=1+1',
      '+15551234567',
      '-2',
      '@x',
      '\tx',
      '\rx',
      'a,b',
      'say "hi"',
      'two\r\nlines',
      ' edge ',
      'Acme\u2028Labs',
      '',
      null,
    ]);
  return Array.from({ length: count }, (_, i) => ({
    ...missingAccount(`acc_${seed}_${i}`),
    name: i % 3 === 0 ? odd() : faker.company.name(),
    domain: faker.internet.domainName(),
    industry: i % 4 === 0 ? odd() : 'Software',
    employeeCount: i % 5 === 0 ? null : faker.number.int(10_000),
    country: 'US',
    contacts: Array.from({ length: i % 4 === 3 ? 0 : faker.number.int({ min: 1, max: 6 }) }, (_, j) => ({
      ...blankContact(`ct_${seed}_${i}_${j}`),
      firstName: faker.person.firstName(),
      lastName: j % 2 ? odd() : faker.person.lastName(),
      title: faker.person.jobTitle(),
      seniority: faker.helpers.arrayElement(['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown', null]),
      email: faker.helpers.arrayElement([faker.internet.email(), null, '']),
      emailStatus: 'valid',
      mobilePhone: faker.helpers.arrayElement(['+15551234567', '+1 555 0100', '=cmd', null]),
      directPhone: faker.helpers.arrayElement(['+4917012345678', '+0123', null]),
      country: j % 3 ? 'DE' : odd(),
    })),
  }));
}

/** An enriched campaign whose result parts are written by `write`. */
async function enrichedCampaign(
  parts: EnrichedAccount[][],
  write: (prefix: string, index: number, accounts: EnrichedAccount[]) => Promise<void>,
) {
  const { organizationId, apiKey } = await newOrganization({ name: 'Parts' });
  const campaignId = newCampaignId();
  const attemptId = `att_${attemptSuffix()}`;
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  await Promise.all(parts.map((part, index) => write(resultsPrefix(organizationId, campaignId, attemptId), index, part)));
  const now = Date.now();
  const completedAt = new Date(now - 60_000).toISOString();
  await campaigns().create({
    id: campaignId,
    organizationId,
    name: 'Parts',
    status: 'enriched',
    createdVia: 'api',
    excludeEnrichedWithinDays: null,
    createdAt: new Date(now - 120_000).toISOString(),
    accountsRequested: total,
    accountsObjectKey: accountListKey(organizationId, campaignId),
    accountsEligible: total,
    accountsExcluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 },
    creditsCharged: total,
    lastEnrichment: null,
    completedAt,
    resultsExpireAt: new Date(now + 86_400_000).toISOString(),
    results: { totalAccounts: total, totalContactsFound: 1, pctAccountsWithContact: 1, pctAccountsWithMobile: 1 },
    attempt: {
      id: attemptId,
      startedAt: new Date(now - 120_000).toISOString(),
      eligible: total,
      charged: total,
      creditsPerAccount: 1,
      eligibleObjectKey: objectKeys.eligibleList(organizationId, campaignId, attemptId),
      executionArn: `arn:aws:states:us-east-1:000000000000:execution:local:${attemptId}`,
    },
  });
  return { apiKey, campaignId, completedAt };
}

/** The part of the former layout, as the former ResultStore.putPart wrote it. */
const putLegacyPart = async (prefix: string, index: number, accounts: EnrichedAccount[]) => {
  await s3().send(
    new PutObjectCommand({
      Bucket: config.bucketName,
      Key: `${prefix}part-${String(index).padStart(6, '0')}.jsonl`,
      Body: accounts.map((account) => JSON.stringify(account)).join('\n'),
      ContentType: 'application/x-ndjson',
    }),
  );
};

const SELECTIONS = [
  {},
  { hasMobilePhone: true },
  { hasEmail: true, maxContactsPerAccount: 1 },
  { hasMobilePhone: true, hasEmail: true, maxContactsPerAccount: 3 },
  { maxContactsPerAccount: 0 },
];

describe.concurrent('export from result parts', () => {
  it.each([
    [
      'written by ResultStore.putPart (the workflow)',
      async (prefix: string, index: number, part: EnrichedAccount[]): Promise<void> => void (await results().putPart(prefix, index, part)),
    ],
    ['of the former JSON-lines layout (enriched before a deployment)', putLegacyPart],
  ] as const)("the downloaded file is the former encoder's bytes for every selection: parts %s", async (_label, write) => {
    const parts = [accounts(40, 1), accounts(25, 2), accounts(33, 3)];
    const { apiKey, campaignId, completedAt } = await enrichedCampaign(parts, write);
    for (const selection of SELECTIONS) {
      const res = await call(api(), '/v1/campaigns/export', { apiKey, body: { campaignId, ...selection } });
      expect(res.status, JSON.stringify(res.error)).toBe(200);
      const expected = await oracleExport(parts, selection, completedAt);
      const file = Buffer.from(await (await fetch(res.data.url)).arrayBuffer());
      expect(file.equals(expected.bytes), JSON.stringify(selection)).toBe(true);
      expect(res.data.rows).toEqual({ accounts: expected.accounts, contacts: expected.contacts });
    }
  });
});
