/**
 * The account history keyed by account (issue #29; docs/launch.md, README.md#operator-cli;
 * docs/data-model.md "Recency and CRM targets"), through HTTP against
 * DynamoDB Local and the local S3 endpoint: recency exact at the window's
 * edges after many overlapping campaigns, a completion racing a launch, a CRM
 * list larger than the campaign, the migration from the S3 markers and CRM
 * lists, and a launch's history reads counted by an SDK middleware.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ddb, s3 } from '../../lib/aws';
import { config } from '../../lib/config';
import { classifyAccount, recencyCutoff } from '../../lib/enrichment/evaluate';
import { newCampaignId } from '../../lib/ids';
import { listKeys } from '../../lib/storage/prefixes';
import { objectKeys } from '../../lib/objects';
import { addressOf, bucketOf, fingerprintOf } from '../../lib/history/store';
import { migrateHistoryShards, readLegacyHistory } from '../../lib/migrations/history-shards';
import { accountHistory, accountLists, organizations } from '../../lib/root';
import { call, newOrganization, useApi } from '../support/api';
import {
  DAY_MS,
  account,
  activeAccounts,
  createApiCampaign,
  enrich,
  expectError,
  gate,
  historyBucketPrefix,
  importAccounts,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './support';

const api = useApi();
const QUOTE = '/v1/campaigns/quote';

afterEach(() => {
  vi.useRealTimers();
});

/** The history's DynamoDB reads of one organization while `run` runs: BatchGetItem calls and keys, counted by a middleware on the shared client. */
async function countHistoryReads<T>(organizationId: string, run: () => Promise<T>): Promise<{ result: T; calls: number; keys: number }> {
  const counted = { calls: 0, keys: 0 };
  const name = `countHistory${uniquePrefix()}`;
  const bucketPrefix = historyBucketPrefix(organizationId);
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      if (String(context.commandName).startsWith('BatchGet')) {
        const requested = Object.values((args.input as { RequestItems: Record<string, { Keys: unknown[] }> }).RequestItems).flatMap(
          (r) => r.Keys,
        );
        const buckets = requested.filter((key) => JSON.stringify(key).includes(bucketPrefix)).length;
        if (buckets > 0) {
          counted.calls++;
          counted.keys += buckets;
        }
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), ...counted };
  } finally {
    ddb.middlewareStack.remove(name);
  }
}

/** How many distinct history buckets the accounts fall in under the organization's stored bucket count (lib/history/store.ts `bucketOf`). */
async function bucketsOf(organizationId: string, accountIds: readonly string[]): Promise<number> {
  const { buckets } = await accountHistory().state(organizationId);
  return new Set(accountIds.map((id) => bucketOf(addressOf(fingerprintOf(id)), buckets).bucket)).size;
}

/** Holds, until `hold` opens, the shared DynamoDB client's calls that `matches`; `reached` resolves at the first one held. */
function holdDynamoDb(matches: (commandName: string, input: unknown) => boolean) {
  const hold = gate();
  const reached = gate();
  const name = `held${uniquePrefix()}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      if (matches(String(context.commandName), args.input)) {
        reached.open();
        await hold.promise;
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { hold, reached, remove: () => (hold.open(), ddb.middlewareStack.remove(name)) };
}

/** Quotes a campaign at `at` (epoch ms; only Date is faked, near the real time: the S3 endpoint refuses requests signed more than 15 minutes off). */
async function quoteAt(apiKey: string, campaignId: string, at?: number) {
  if (at !== undefined) {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(at);
  }
  try {
    const res = await call(api(), QUOTE, { apiKey, body: { campaignId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.data.accounts as {
      requested: number;
      eligible: number;
      excluded: { total: number; invalid: number; recentlyEnriched: number; crmExcluded: number };
    };
  } finally {
    vi.useRealTimers();
  }
}

describe('recency exactness (docs/launch.md)', () => {
  it('65 prior campaigns with overlapping lists completing around the window start: each account takes its latest completion, strictly after the start to the millisecond', async () => {
    const p = uniquePrefix();
    const ids = Array.from({ length: 35 }, (_, i) => `${p}_${i}`);
    await importAccounts(ids.map((id) => account(id)));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 1_000 });
    const campaignId = await createApiCampaign(api(), apiKey, ids, 30);
    const launchAt = Date.now() + 5_000;
    const windowStart = recencyCutoff(30, new Date(launchAt))!;

    // Campaign k < 60 enriched accounts k, k+1, k+2 (mod 30) at windowStart + k − 58 ms: account 28's latest is exactly the
    // window's start (not recent), 27's 1 ms before it, 29's, 0's and 1's 1 ms after it (campaign 59). Campaigns 60..64, older,
    // enriched accounts 30..34 (and 0..4 again) before the start. Recorded through the completion path, in a scrambled order.
    const campaigns: { accountIds: string[]; completedAt: number }[] = [];
    for (let k = 0; k < 60; k++)
      campaigns.push({ accountIds: [k, k + 1, k + 2].map((j) => ids[j % 30]!), completedAt: windowStart + k - 58 });
    for (let k = 0; k < 5; k++) campaigns.push({ accountIds: [ids[30 + k]!, ids[k]!], completedAt: windowStart - 1 - k });
    const order = campaigns.map((_, i) => (i * 37) % campaigns.length);
    expect(new Set(order).size).toBe(campaigns.length);
    for (const i of order) {
      const { accountIds, completedAt } = campaigns[i]!;
      const prior = newCampaignId();
      const key = objectKeys.eligibleList(organizationId, prior, `att_${i}`);
      await accountLists().put(key, accountIds);
      await accountHistory().recordCompletion(organizationId, prior, new Date(completedAt).toISOString(), key);
    }
    // A CRM target that is also recent counts as recently enriched (precedence); one that is not, as CRM excluded.
    await accountHistory().addCrmTargets(organizationId, [ids[0]!, ids[33]!]);

    const latest = (j: number) => Math.max(...campaigns.filter((c) => c.accountIds.includes(ids[j]!)).map((c) => c.completedAt));
    expect([27, 28, 29, 0, 1].map((j) => latest(j) - windowStart)).toEqual([-1, 0, 1, 1, 1]);
    expect(await quoteAt(apiKey, campaignId, launchAt)).toEqual({
      requested: 35,
      eligible: 31,
      excluded: { total: 4, invalid: 0, recentlyEnriched: 3, crmExcluded: 1 },
    });

    const facts = await accountHistory().getFacts(organizationId, ids, { enrichedAfter: windowStart });
    expect(ids.map((id) => facts.get(id)?.lastEnrichedAt ?? null)).toEqual(
      ids.map((_, j) => (latest(j) > windowStart ? new Date(latest(j)).toISOString() : null)),
    );
    const all = await accountHistory().getFacts(organizationId, ids);
    expect(ids.map((id) => all.get(id)?.lastEnrichedAt)).toEqual(ids.map((_, j) => new Date(latest(j)).toISOString()));
  });
});

describe('a completion racing a launch (docs/launch.md)', () => {
  it('a launch that read the organization before FinishRecording removed the pending completion, and the history after it wrote it, still excludes the accounts', async () => {
    const p = uniquePrefix();
    const ids = [`${p}_x`, `${p}_y`];
    await importAccounts(ids.map((id) => account(id)));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    const bucketPrefix = historyBucketPrefix(organizationId);

    // 1. Campaign A completes; FinishRecording's bucket write waits.
    const write = holdDynamoDb((command, input) => command.startsWith('Put') && JSON.stringify(input).includes(bucketPrefix));
    let read: ReturnType<typeof holdDynamoDb> | undefined;
    try {
      const a = await createApiCampaign(api(), apiKey, ids);
      expect((await enrich(api(), apiKey, a)).status).toBe(200);
      await waitForStatus(api(), apiKey, a, 'enriched');
      await write.reached.promise;
      expect((await organizations().get(organizationId))!.pendingRecency).toEqual([expect.objectContaining({ campaignId: a })]);

      // 2. Launch B reads the organization (A pending), then its history read waits.
      read = holdDynamoDb((command, input) => command.startsWith('BatchGet') && JSON.stringify(input).includes(bucketPrefix));
      const b = await createApiCampaign(api(), apiKey, ids, 30);
      const launch = enrich(api(), apiKey, b);
      await read.reached.promise;

      // 3. FinishRecording writes the buckets and removes A from the organization item.
      write.hold.open();
      await pollUntil(
        () => organizations().get(organizationId),
        (org) => org?.pendingRecency === undefined,
      );

      // 4. B's history read goes on: B saw A either way, and is refused.
      read.hold.open();
      expectError(await launch, 422, 'no_eligible_accounts', { requested: 2 });
      // A launch that reads the organization only now finds A in the history alone.
      expectError(await enrich(api(), apiKey, b), 422, 'no_eligible_accounts', { requested: 2 });
    } finally {
      write.remove();
      read?.remove();
    }
  });
});

describe('CRM targets (README.md#operator-cli)', () => {
  it('a CRM list larger than the campaign: the campaign reads only its own accounts’ buckets, in one call as with a three-account list', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 10);
    const ids = accounts.map((a) => a.accountId);
    await importAccounts(accounts);
    const big = await newOrganization({ smbCredits: 100 });
    const small = await newOrganization({ smbCredits: 100 });
    // 5,000 targets, three of them in the campaign; the other organization has just those three.
    const crm = [...ids.slice(0, 3), ...Array.from({ length: 4_997 }, (_, i) => `${p}_crm_${i}`)];
    expect(await accountHistory().addCrmTargets(big.organizationId, crm)).toBe(5_000);
    await accountHistory().addCrmTargets(small.organizationId, ids.slice(0, 3));

    const quoted = async (org: { organizationId: string; apiKey: string }) => {
      const campaignId = await createApiCampaign(api(), org.apiKey, ids, 30);
      return countHistoryReads(org.organizationId, () => quoteAt(org.apiKey, campaignId));
    };
    const [withBig, withSmall] = [await quoted(big), await quoted(small)];
    const expected = { requested: 10, eligible: 7, excluded: { total: 3, invalid: 0, recentlyEnriched: 0, crmExcluded: 3 } };
    expect(withBig.result).toEqual(expected);
    expect(withSmall.result).toEqual(expected);
    // One BatchGetItem of the buckets the campaign's accounts fall in (at most one per account), whatever the
    // size of the CRM list: the 5,000 targets spread over more buckets, of which the campaign reads only its own.
    expect((await accountHistory().state(big.organizationId)).buckets).toBeGreaterThan(ids.length);
    expect({ calls: withBig.calls, keys: withBig.keys }).toEqual({ calls: 1, keys: await bucketsOf(big.organizationId, ids) });
    expect({ calls: withSmall.calls, keys: withSmall.keys }).toEqual({ calls: 1, keys: await bucketsOf(small.organizationId, ids) });
    expect(withBig.keys).toBeLessThanOrEqual(ids.length);
  });
});

describe('history reads do not grow with the history (docs/launch.md)', () => {
  it('a launch’s history reads are one call of its own accounts’ buckets after 10 and after 200 prior campaigns over overlapping lists', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 50);
    const ids = accounts.map((a) => a.accountId);
    await importAccounts(accounts);
    const now = Date.now();
    const withPrior = async (count: number) => {
      const org = await newOrganization({ smbCredits: 1_000 });
      // Campaign k enriched 25 of the 50 accounts, shifted by k, k hours ago (all inside the 30-day window).
      for (let k = 0; k < count; k++) {
        const list = Array.from({ length: 25 }, (_, i) => ids[(k + i) % 50]!);
        await accountHistory().recordEnrichment(org.organizationId, list, new Date(now - (k + 1) * 3_600_000).toISOString());
      }
      const campaignId = await createApiCampaign(api(), org.apiKey, ids, 30);
      const buckets = await bucketsOf(org.organizationId, ids);
      const { result, calls, keys } = await countHistoryReads(org.organizationId, () => enrich(api(), org.apiKey, campaignId));
      return {
        reads: { calls, keys },
        buckets,
        excluded: result.status === 200 ? result.data.accounts.excluded.recentlyEnriched : result.error?.details,
      };
    };
    const [ten, twoHundred] = [await withPrior(10), await withPrior(200)];
    // 10 campaigns enriched 34 of the 50 accounts (the launch goes ahead with 16); 200 enriched all 50 (refused).
    expect([ten.excluded, twoHundred.excluded]).toEqual([34, { requested: 50 }]);
    // Either way one BatchGetItem of the buckets the 50 accounts fall in (at most one per account): the history
    // holds one entry per account, so 190 more campaigns over the same accounts add no read.
    expect(ten.reads).toEqual({ calls: 1, keys: ten.buckets });
    expect(twoHundred.reads).toEqual({ calls: 1, keys: twoHundred.buckets });
    expect(twoHundred.reads.keys).toBeLessThanOrEqual(50);
  });
});

describe('migration from the S3 markers and CRM lists (lib/migrations/history-shards.ts)', () => {
  it('gives the same evaluation counts on the same campaigns before and after, deletes the objects, and a second run changes nothing', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 20);
    const ids = accounts.map((a) => a.accountId);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 1_000 });
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY_MS).toISOString();

    // The former layout: one marker per enriched campaign (its eligible list), CRM lists per import.
    const markers: [string, number[]][] = [
      [ago(2), [0, 1, 2, 3, 4, 5]],
      [ago(10), [4, 5, 6, 7, 8, 9]],
      [ago(40), [8, 9, 10, 11, 12, 13]],
      [ago(100), [12, 13, 14, 15, 16]],
      [ago(10), [1, 17]],
    ];
    for (const [completedAt, members] of markers)
      await accountLists().put(
        objectKeys.recencyMarker(organizationId, completedAt, newCampaignId()),
        members.map((i) => ids[i]!),
      );
    await accountLists().put(objectKeys.crmList(organizationId, `${ago(1)}-a`), [ids[3]!, ids[11]!, ids[18]!]);
    await accountLists().put(objectKeys.crmList(organizationId, `${ago(0)}-b`), [ids[18]!, ids[19]!, `${p}_elsewhere`]);

    const windows = [null, 7, 30, 90, 365];
    const campaigns = await Promise.all(windows.map((days, i) => createApiCampaign(api(), apiKey, ids.slice(i, i + 16), days)));

    // Before: the evaluation's classification over the facts the former layout held (the latest marker holding each account).
    const legacy = await readLegacyHistory({ s3: s3(), bucketName: config.bucketName }, organizationId);
    const before = windows.map((days, i) => {
      const cutoff = recencyCutoff(days, new Date(now));
      const excluded = { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 };
      for (const id of ids.slice(i, i + 16)) {
        const at = legacy.enrichedAt.get(id);
        const bucket = classifyAccount('active', { crmTarget: legacy.crmTargets.has(id), ...(at ? { lastEnrichedAt: at } : {}) }, cutoff);
        if (bucket !== 'eligible') {
          excluded[bucket]++;
          excluded.total++;
        }
      }
      return { requested: 16, eligible: 16 - excluded.total, excluded };
    });
    // Not trivial: each window excludes a different number of accounts.
    expect(before.map((b) => b.excluded.recentlyEnriched)).toEqual([0, 5, 9, 12, 14]);

    const first = await migrateHistoryShards({ s3: s3(), bucketName: config.bucketName, history: accountHistory() });
    expect(first.markers).toBeGreaterThanOrEqual(markers.length);
    expect(first.crmLists).toBeGreaterThanOrEqual(2);
    for (const [i, campaignId] of campaigns.entries())
      expect(await quoteAt(apiKey, campaignId, now), `window ${windows[i]}`).toEqual(before[i]);
    expect(await listKeys(s3(), config.bucketName, objectKeys.recencyPrefix(organizationId))).toEqual([]);
    expect(await listKeys(s3(), config.bucketName, objectKeys.crmPrefix(organizationId))).toEqual([]);

    const facts = await accountHistory().getFacts(organizationId, [...ids, `${p}_elsewhere`]);
    await migrateHistoryShards({ s3: s3(), bucketName: config.bucketName, history: accountHistory() });
    expect(await accountHistory().getFacts(organizationId, [...ids, `${p}_elsewhere`])).toEqual(facts);
    expect(facts.get(`${p}_elsewhere`)).toEqual({ crmTarget: true });
    expect(facts.get(ids[1]!)?.lastEnrichedAt).toBe(ago(2));
  });
});
