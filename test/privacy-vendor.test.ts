/**
 * The vendor's erasure (docs/privacy.md "The vendor's erasure") through the
 * operator CLI, end to end: organizations A and B were both delivered a
 * person; `ops privacy:erase` takes the person out of the warehouse and of
 * both organizations' stored results and exports, tells each one with
 * `privacy.contact_erased` naming only its own campaigns, and a new campaign
 * over the same accounts is charged only for an account that keeps a
 * contact. `ops privacy:intake` does the same per line, idempotently.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { customAlphabet } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../infra/ops/commands';
import { runOps } from '../infra/ops/program';
import { ddb } from '../lib/aws';
import * as keys from '../lib/db/keys';
import { embeddedWarehouse } from '../lib/root';
import { blankAccount, blankContact, type WarehouseAccount, type WarehouseContact } from '../lib/warehouse/schema';
import { call, newOrganization, useApi } from './support/api';
import { SPAWNED_RUN_MS } from './support/spawned';

const api = useApi();
const P = customAlphabet('abcdefghijkmnopqrstuvwxyz23456789', 12)();
const TABLE = process.env.TABLE_NAME!;
const BUCKET = process.env.BUCKET_NAME!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const contact = (contactId: string, fields: Partial<WarehouseContact>): WarehouseContact => ({
  ...blankContact(contactId),
  seniority: 'director',
  ...fields,
});
const account = (suffix: string, contacts: WarehouseContact[]): WarehouseAccount => ({
  ...blankAccount(`${P}-${suffix}`),
  name: `Vendor ${suffix}`,
  domain: null,
  status: 'active',
  industry: null,
  employeeCount: null,
  country: null,
  contacts,
});

const VICTOR = `victor.${P}@example.com`;
const URSULA = `ursula.${P}@example.com`;
const withOther = account('with-other', [
  contact(`${P}-victor`, { email: VICTOR }),
  contact(`${P}-keep`, { email: `keep.${P}@example.com` }),
]);
const victorOnly = account('victor-only', [contact(`${P}-victor`, { email: VICTOR })]);
const ursulaOnly = account('ursula-only', [contact(`${P}-ursula`, { email: URSULA })]);

const post = (pathName: string, apiKey: string, body: unknown) => call(api(), pathName, { apiKey, body });

async function enriched(apiKey: string, accountIds: string[]) {
  const created = await post('/v1/campaigns/create', apiKey, { name: `Vendor ${P}`, accountIds });
  await post('/v1/campaigns/enrich', apiKey, { campaignId: created.data.id });
  for (const deadline = Date.now() + SPAWNED_RUN_MS; ; await sleep(50)) {
    const got = await post('/v1/campaigns/get', apiKey, { campaignId: created.data.id });
    if (got.data?.status === 'enriched') return got.data;
    if (Date.now() > deadline) throw new Error(JSON.stringify(got.body));
  }
}

async function exported(apiKey: string, campaignId: string) {
  const res = await post('/v1/campaigns/export', apiKey, { campaignId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { url: res.data.url as string, text: await (await fetch(res.data.url)).text() };
}

async function privacyEvents(organizationId: string) {
  const page = await ddb.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': keys.webhooks(organizationId), ':sk': 'EVENT#' },
    }),
  );
  return (page.Items ?? []).filter((item) => item.eventType === 'privacy.contact_erased');
}

async function ops(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOps([...argv, '--table', TABLE, '--bucket', BUCKET], COMMANDS, {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
  });
  return { code, result: out.length ? JSON.parse(out.join('')) : undefined, err: err.join('') };
}

beforeAll(async () => {
  await embeddedWarehouse().importAccounts([withOther, victorOnly, ursulaOnly]);
});

// The vendor's erasure scans the warehouse and looks at every organization's copies (docs/privacy.md): on the shared test
// table of a full run that is everything the other files wrote: the waits take the allowance of test/support/spawned.ts.
describe('ops privacy:erase', () => {
  it('erases a person delivered to A and B everywhere and tells each organization about its own campaigns only', async () => {
    const a = await newOrganization({ name: 'Vendor A' });
    const b = await newOrganization({ name: 'Vendor B' });
    const campaignA = await enriched(a.apiKey, [withOther.accountId]);
    const campaignB = await enriched(b.apiKey, [withOther.accountId, victorOnly.accountId]);
    const oldA = await exported(a.apiKey, campaignA.id);
    expect(oldA.text).toContain(VICTOR);

    const run = await ops(['privacy:erase', '--email', ` ${VICTOR.toUpperCase()} `, '--reason', 'DSR 1']);
    expect(run.code, run.err).toBe(0);
    expect(run.result).toMatchObject({ warehouseContactsRemoved: 2, notified: 2, organizations: 2, contactsRemoved: 3, reason: 'DSR 1' });
    expect(JSON.stringify(run.result)).not.toContain(VICTOR);

    expect((await fetch(oldA.url)).status).toBe(404);
    for (const [key, campaign] of [
      [a.apiKey, campaignA],
      [b.apiKey, campaignB],
    ] as const) {
      const fresh = await exported(key, campaign.id);
      expect(fresh.text).not.toContain(VICTOR);
      expect(fresh.text).not.toContain(`,${P}-victor,`);
    }
    const eventsB = await privacyEvents(b.organizationId);
    expect(eventsB).toHaveLength(1);
    expect(eventsB[0]!.data).toEqual({ contactId: `${P}-victor`, identifiers: run.result.identifiers, campaignIds: [campaignB.id] });
    expect((await privacyEvents(a.organizationId)).map((e) => e.data.campaignIds)).toEqual([[campaignA.id]]);

    // Again: nothing more to remove, no second event.
    const again = await ops(['privacy:erase', '--email', VICTOR, '--reason', 'DSR 1 again']);
    expect(again.result).toMatchObject({ warehouseContactsRemoved: 0, contactsRemoved: 0, notified: 0 });
    expect(await privacyEvents(b.organizationId)).toHaveLength(1);

    // A new campaign over the same accounts: charged only for the account that keeps a contact.
    const c = await newOrganization({ name: 'Vendor C' });
    const later = await enriched(c.apiKey, [withOther.accountId, victorOnly.accountId]);
    expect(later.credits.charged).toBe(1);
    expect((await exported(c.apiKey, later.id)).text).not.toContain(VICTOR);
  });

  it('refuses a value that does not normalize (usage, nothing done) without repeating it', async () => {
    const run = await ops(['privacy:erase', '--phone', `0170-${P}`, '--reason', 'x']);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/phone: cannot be normalized/);
    expect(run.err).not.toContain(`0170-${P}`);
  });
});

describe('ops privacy:intake', () => {
  it('erases each line, prints {requests, erased, notified}, and a second run of the same file erases nothing more', async () => {
    const d = await newOrganization({ name: 'Vendor D' });
    await enriched(d.apiKey, [ursulaOnly.accountId]);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'intake-')), 'drop.jsonl');
    writeFileSync(file, `${JSON.stringify({ email: URSULA })}\n\n${JSON.stringify({ email: `nobody.${P}@example.com` })}\n`);
    const first = await ops(['privacy:intake', file]);
    expect(first.code, first.err).toBe(0);
    expect(first.result).toEqual({ requests: 2, erased: 1, notified: 1 });
    expect((await ops(['privacy:intake', file])).result).toEqual({ requests: 2, erased: 0, notified: 0 });

    const badFile = path.join(path.dirname(file), 'bad.jsonl');
    writeFileSync(badFile, `${JSON.stringify({ phone: `12-${P}` })}\nnot json\n`);
    const bad = await ops(['privacy:intake', badFile]);
    expect(bad.code).toBe(3);
    expect(bad.err).toMatch(/line 1: phone: cannot be normalized/);
    expect(bad.err).not.toContain(`12-${P}`);
  });
});
