/**
 * The vendor's erasure reads only the stored copies of the person
 * (docs/privacy.md "The vendor's erasure"; lib/privacy/copies.ts): through
 * HTTP, the local workflow, DynamoDB Local and s3rver, an organization is
 * delivered two people in one result part; one is erased (`ops
 * privacy:erase`), then 20 unrelated organizations each enrich a campaign,
 * then the other is erased. Counted on the wire (SDK middleware on the
 * service's own clients): each erasure reads exactly the one result part that
 * holds its person and queries the copy index partitions of its identifier
 * hashes (one per level and bucket); the 20 organizations' parts add 0
 * result-part reads and no partition (their index items are read: one small
 * item each, counted).
 * Also: parts stored before the index (migration 008) are found.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { customAlphabet } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../infra/ops/commands';
import { runOps } from '../infra/ops/program';
import { ddb, s3 } from '../lib/aws';
import * as keys from '../lib/db/keys';
import { migrateCopyIndex } from '../lib/migrations/copy-index';
import { copyIndexLevel, MAX_COPY_INDEX_LEVEL } from '../lib/privacy/copies';
import { copyIndex, embeddedWarehouse } from '../lib/root';
import { createResultStore, resultsPrefix } from '../lib/results/parts';
import { contactHashes, hashIdentifier } from '../lib/warehouse/identifiers';
import { blankAccount, blankContact, type WarehouseAccount, type WarehouseContact } from '../lib/warehouse/schema';
import { call, newOrganization, useApi } from './support/api';
import { SPAWNED_RUN_MS } from './support/spawned';

const api = useApi();
const P = customAlphabet('abcdefghijkmnopqrstuvwxyz23456789', 12)();
const TABLE = process.env.TABLE_NAME!;
const BUCKET = process.env.BUCKET_NAME!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const contact = (contactId: string, email: string): WarehouseContact => ({ ...blankContact(contactId), seniority: 'director', email });
const account = (suffix: string, contacts: WarehouseContact[]): WarehouseAccount => ({
  ...blankAccount(`${P}-${suffix}`),
  name: `Copies ${suffix}`,
  status: 'active',
  contacts,
});
const ONE = `one.${P}@example.com`;
const TWO = `two.${P}@example.com`;
const both = account('both', [contact(`${P}-one`, ONE), contact(`${P}-two`, TWO), contact(`${P}-stays`, `stays.${P}@example.com`)]);
const UNRELATED = 20;
const unrelated = Array.from({ length: UNRELATED }, (_, i) =>
  account(`unrelated-${i}`, [contact(`${P}-u${i}a`, `u${i}a.${P}@example.com`), contact(`${P}-u${i}b`, `u${i}b.${P}@example.com`)]),
);

async function enriched(apiKey: string, accountIds: string[]) {
  const created = await call(api(), '/v1/campaigns/create', { apiKey, body: { name: `Copies ${P}`, accountIds } });
  await call(api(), '/v1/campaigns/enrich', { apiKey, body: { campaignId: created.data.id } });
  for (const deadline = Date.now() + SPAWNED_RUN_MS; ; await sleep(50)) {
    const got = await call(api(), '/v1/campaigns/get', { apiKey, body: { campaignId: created.data.id } });
    if (got.data?.status === 'enriched') return got.data as { id: string };
    if (Date.now() > deadline) throw new Error(JSON.stringify(got.body));
  }
}

/** What the service's own clients sent while `run` ran: result-part reads, and copy-index Queries with the items they answered. */
async function counted<T>(run: () => Promise<T>) {
  const partReads: string[] = [];
  const indexQueries: { partition: string; items: number }[] = [];
  const name = `copies-count-${P}`;
  s3().middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: string }).Key;
      if (context.commandName === 'GetObjectCommand' && key?.includes('/results/part-')) partReads.push(key);
      return next(args);
    },
    { step: 'initialize', name },
  );
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const partition = (args.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':pk'];
      if (context.commandName === 'QueryCommand' && typeof partition === 'string' && partition.startsWith('COPIES#'))
        indexQueries.push({ partition, items: ((result.output as { Items?: unknown[] }).Items ?? []).length });
      return result;
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), partReads, indexQueries };
  } finally {
    s3().middlewareStack.remove(name);
    ddb.middlewareStack.remove(name);
  }
}

async function erase(email: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOps(['privacy:erase', '--email', email, '--reason', 'count', '--table', TABLE, '--bucket', BUCKET], COMMANDS, {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
  });
  expect(code, err.join('')).toBe(0);
  return JSON.parse(out.join('')) as { contactsRemoved: number; organizations: number; notified: number };
}

/** The copy-index partitions a lookup of these hashes reads: one per distinct (level, bucket). */
const partitionsOf = (hashes: string[]) =>
  new Set(
    hashes.flatMap((hash) =>
      Array.from({ length: MAX_COPY_INDEX_LEVEL + 1 }, (_, level) =>
        keys.copyIndexPartition(level, level === 0 ? 0 : Buffer.from(hash, 'hex').readUInt16BE(0) >>> (16 - level)),
      ),
    ),
  );

beforeAll(async () => {
  await embeddedWarehouse().importAccounts([both, ...unrelated]);
});

describe("the vendor's erasure reads only the person's copies", () => {
  it("20 unrelated organizations' result parts add 0 part reads and no index partition to an erasure", async () => {
    const holder = await newOrganization({ name: 'Copies holder' });
    const campaign = await enriched(holder.apiKey, [both.accountId]);

    /**
     * Erases the person of `email` (warehouse contact `contactId`), counted: exactly the one part holding them is read
     * (and rewritten), and the copy index is queried in the partitions of their hashes: the email, then the warehouse
     * contact's ID found by it (one Query each, as many pages as the partition has: on this shared table, other files'
     * parts too).
     */
    const erasedReadingOnlyTheHolder = async (email: string, contactId: string) => {
      const run = await counted(() => erase(email));
      expect(run.result).toMatchObject({ contactsRemoved: 1, organizations: 1, notified: 1 });
      expect(run.partReads).toHaveLength(1);
      expect(run.partReads[0]).toContain(`${holder.organizationId}/${campaign.id}/`);
      const hashes = [hashIdentifier({ type: 'email', value: email })!.hash, ...contactHashes(blankContact(contactId))];
      expect(new Set(run.indexQueries.map((q) => q.partition))).toEqual(partitionsOf(hashes));
      return run;
    };
    const first = await erasedReadingOnlyTheHolder(ONE, `${P}-one`);

    // 20 unrelated organizations, each with an enriched campaign of its own accounts (their parts indexed by the workflow).
    const others = await Promise.all(unrelated.map((_, i) => newOrganization({ name: `Copies unrelated ${i}` })));
    await Promise.all(others.map((org, i) => enriched(org.apiKey, [unrelated[i]!.accountId])));

    // The same reads for the other person: 0 part reads and no partition more.
    const second = await erasedReadingOnlyTheHolder(TWO, `${P}-two`);
    // The measure is real: the unrelated parts are in the index the lookup read (a small part is one level-0 item)…
    const levelZero = (run: typeof first) =>
      run.indexQueries.filter((q) => q.partition === keys.copyIndexPartition(0, 0)).reduce((n, q) => n + q.items, 0);
    expect(copyIndexLevel(2 * 4)).toBe(0);
    expect(levelZero(second)).toBeGreaterThanOrEqual(levelZero(first) + UNRELATED);
    // …and the erasure still found and removed the person, reading none of their parts.
    const exported = await call(api(), '/v1/campaigns/export', { apiKey: holder.apiKey, body: { campaignId: campaign.id } });
    const text = await (await fetch(exported.data.url)).text();
    expect(text).not.toContain(ONE);
    expect(text).not.toContain(TWO);
    expect(text).toContain(`stays.${P}@example.com`);
  });

  it('finds parts stored before the copy index once migration 008 has run', async () => {
    // A scratch bucket holding one part written as the workflow wrote parts before the index (no index items).
    const bucketName = `copies-${P}`;
    await s3().send(new CreateBucketCommand({ Bucket: bucketName }));
    const organizationId = `org_${P}copies`;
    const prefix = resultsPrefix(organizationId, `cmp_${P}`, `att_${P}`);
    const stored = createResultStore({ client: s3(), bucketName });
    const { status: _status, ...fields } = both;
    await stored.putPart(prefix, 0, [fields]);
    const hash = hashIdentifier({ type: 'email', value: ONE })!.hash;
    expect(await copyIndex().partsHolding(new Set([hash]))).not.toContain(`${prefix}part-000000.bin`);

    expect(await migrateCopyIndex({ client: ddb, tableName: TABLE, s3: s3(), bucketName })).toEqual({ parts: 1 });
    expect(await copyIndex().partsHolding(new Set([hash]))).toContain(`${prefix}part-000000.bin`);
    // Idempotent: the same items again.
    expect(await migrateCopyIndex({ client: ddb, tableName: TABLE, s3: s3(), bucketName })).toEqual({ parts: 1 });
    expect((await copyIndex().partsHolding(new Set([hash]))).filter((key) => key.startsWith(prefix))).toEqual([`${prefix}part-000000.bin`]);
  });
});
