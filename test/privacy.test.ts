/**
 * Privacy (docs/privacy.md) end to end: real HTTP against the local API
 * server, DynamoDB Local, s3rver and the local workflow. Suppressions keep a
 * contact out of the export and of the accounts' `contactsFound`, a new
 * launch refunds an account whose contacts are all suppressed, an erasure
 * (idempotent on requestRef) rewrites the stored results and deletes the
 * exports, its receipt verifies against the served keys, and no raw
 * identifier of a request is left in any log line, table item or object.
 */
import { ListObjectsV2Command, GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, QueryCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { compactVerify, createLocalJWKSet } from 'jose';
import fc from 'fast-check';
import { customAlphabet } from 'nanoid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ddb, s3 } from '../lib/aws';
import * as keys from '../lib/db/keys';
import { embeddedWarehouse, erasureJobDependencies, erasuresSettled, logger, resumeErasures, suppressions } from '../lib/root';
import { runErasure } from '../lib/privacy/erasure';
import { type RawIdentifier } from '../lib/warehouse/identifiers';
import { ERASURE_LEASE_SECONDS } from '../lib/privacy/store';
import { blankAccount, blankContact, type WarehouseAccount, type WarehouseContact } from '../lib/warehouse/schema';
import { call, newOrganization, useApi } from './support/api';
import { pendingErasure } from './support/erasures';
import { SPAWNED_RUN_MS } from './support/spawned';

const api = useApi();
const P = customAlphabet('abcdefghijkmnopqrstuvwxyz23456789', 12)();
const TABLE = process.env.TABLE_NAME!;
const BUCKET = process.env.BUCKET_NAME!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Every line the service logs in this file, captured (the logger at DEBUG: everything it would ever write).
const logged: string[] = [];
const originalWrite = process.stdout.write.bind(process.stdout);
const originalErrorWrite = process.stderr.write.bind(process.stderr);
beforeAll(() => {
  logger.setLogLevel('DEBUG');
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (originalWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (originalErrorWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
});
afterAll(() => {
  process.stdout.write = originalWrite;
  process.stderr.write = originalErrorWrite;
  logger.setLogLevel('SILENT');
});

/** A contact with every optional field null except those given. */
const contact = (contactId: string, fields: Partial<WarehouseContact> = {}): WarehouseContact => ({
  ...blankContact(contactId),
  seniority: 'manager',
  ...fields,
});
const account = (suffix: string, contacts: WarehouseContact[]): WarehouseAccount => ({
  ...blankAccount(`${P}-${suffix}`),
  name: `Account ${suffix}`,
  domain: `${suffix}.example`,
  status: 'active',
  industry: null,
  employeeCount: 10,
  country: 'DE',
  contacts,
});

// The person: distinctive raw values, in two accounts. Formatted as a careless caller would send them (the phone as
// docs/privacy.md "Identifiers" requires: E.164); the stored phone is formatted, and its digest still matches.
const PERSON = { email: `Zed.Privacy.${P}@Example.com`, phone: '+491705550123', linkedin: `https://www.linkedin.com/in/zed-${P}/` };
const STORED_PHONE = '+49 170 5550123';
const person = (contactId: string) =>
  contact(contactId, {
    email: PERSON.email.toLowerCase(),
    mobilePhone: STORED_PHONE,
    linkedinUrl: `https://linkedin.com/in/zed-${P}`,
    firstName: 'Zed',
  });
const OTHER = (id: string) => contact(id, { email: `other-${id}@example.com`, seniority: 'vp' });
const shared = account('shared', [person(`${P}-zed-1`), OTHER(`${P}-o-1`)]);
const onlyPerson = account('only', [person(`${P}-zed-2`)]);
const plain = account('plain', [OTHER(`${P}-o-2`)]);
// A value only ever sent in a request: it must be nowhere afterwards.
const NEVER_STORED = `never.stored.${P}@example.org`;

/** This file's organizations: the objects the scan reads are theirs (the bucket is shared by every test file). */
const organizationIds: string[] = [];
const newOrganizationHere = async (input: Parameters<typeof newOrganization>[0]): Promise<{ organizationId: string; apiKey: string }> => {
  const made = await newOrganization(input);
  organizationIds.push(made.organizationId);
  return made;
};

const post = (path: string, apiKey: string, body: unknown, headers?: Record<string, string>) =>
  call(api(), path, { apiKey, body, ...(headers ? { headers } : {}) });

async function enrichedCampaign(apiKey: string, accountIds: string[]) {
  const created = await post('/v1/campaigns/create', apiKey, { name: `Privacy ${P}`, accountIds });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const launched = await post('/v1/campaigns/enrich', apiKey, { campaignId: created.data.id });
  expect(launched.status, JSON.stringify(launched.body)).toBe(200);
  return waitFor(apiKey, created.data.id);
}

async function waitFor(apiKey: string, campaignId: string) {
  for (const deadline = Date.now() + SPAWNED_RUN_MS; ;) {
    const got = await post('/v1/campaigns/get', apiKey, { campaignId });
    if (got.data?.status === 'enriched') return got.data;
    if (Date.now() > deadline) throw new Error(`campaign not enriched: ${JSON.stringify(got.body)}`);
    await sleep(50);
  }
}

async function exportText(apiKey: string, campaignId: string) {
  const res = await post('/v1/campaigns/export', apiKey, { campaignId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const file = await fetch(res.data.url);
  expect(file.status).toBe(200);
  return { url: res.data.url as string, text: await file.text(), rows: res.data.rows };
}

async function contactsFound(apiKey: string, campaignId: string) {
  const page = await post('/v1/campaigns/accounts', apiKey, { campaignId });
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  return Object.fromEntries(
    page.data.accounts.map((a: { accountId: string; contactsFound: number | null }) => [a.accountId, a.contactsFound]),
  );
}

/** The person's contacts on every page of POST /v1/campaigns/results (each holds the person's values), and all contacts' count. */
async function personInResults(apiKey: string, campaignId: string) {
  const contacts: Record<string, unknown>[] = [];
  for (let afterSeq = 0; ;) {
    const page = await post('/v1/campaigns/results', apiKey, { campaignId, afterSeq, limit: 1 });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    for (const item of page.data.accounts) contacts.push(...item.contacts);
    if (page.data.accounts.length === 0) break;
    afterSeq = page.data.lastSeq;
  }
  const isPerson = (c: Record<string, unknown>) =>
    Object.values(c).some(
      (v) => typeof v === 'string' && (v.includes(`zed-${P}`) || v === PERSON.email.toLowerCase() || v === STORED_PHONE),
    );
  return { person: contacts.filter(isPerson).length, contacts: contacts.length };
}

async function waitErasure(apiKey: string, id: string) {
  await erasuresSettled();
  const got = await post('/v1/privacy/erasures/get', apiKey, { id });
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  return got.data;
}

beforeAll(async () => {
  await embeddedWarehouse().importAccounts([shared, onlyPerson, plain]);
});

describe('suppressions', () => {
  it('hash the identifiers, are idempotent per hash, keep the contact out of the export and contactsFound, and come back on delete', async () => {
    const { apiKey } = await newOrganizationHere({ name: 'Privacy suppress' });
    const campaign = await enrichedCampaign(apiKey, [shared.accountId, plain.accountId]);
    const before = await exportText(apiKey, campaign.id);
    expect(before.text).toContain(PERSON.email.toLowerCase());
    expect(await contactsFound(apiKey, campaign.id)).toEqual({ [shared.accountId]: 2, [plain.accountId]: 1 });
    expect(await personInResults(apiKey, campaign.id)).toEqual({ person: 1, contacts: 3 });

    const created = await post('/v1/privacy/suppressions/create', apiKey, {
      identifiers: [
        { type: 'email', value: `  ${PERSON.email} ` },
        { type: 'email', value: NEVER_STORED },
      ],
      reason: 'opt_out',
      note: 'ticket 7',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.data.suppressions).toHaveLength(2);
    const [sup] = created.data.suppressions;
    expect(Object.keys(sup).sort()).toEqual(['createdAt', 'hash', 'id', 'origin', 'reason', 'type']);
    expect(sup).toMatchObject({ type: 'email', reason: 'opt_out', origin: 'customer' });
    expect(sup.hash).toMatch(/^[0-9a-f]{64}$/);
    // Idempotent per hash: the same entry again, whatever the spelling.
    const again = await post('/v1/privacy/suppressions/create', apiKey, {
      identifiers: [{ type: 'email', value: PERSON.email.toUpperCase() }],
      reason: 'other',
    });
    expect(again.data.suppressions[0]).toEqual(sup);

    const after = await exportText(apiKey, campaign.id);
    expect(after.text).not.toContain(PERSON.email.toLowerCase());
    expect(after.text).toContain(`other-${P}-o-1@example.com`);
    expect(after.rows).toEqual({ accounts: 2, contacts: before.rows.contacts - 1 });
    expect(await contactsFound(apiKey, campaign.id)).toEqual({ [shared.accountId]: 1, [plain.accountId]: 1 });
    expect(await personInResults(apiKey, campaign.id)).toEqual({ person: 0, contacts: 2 });

    const listed = await post('/v1/privacy/suppressions/list', apiKey, { filters: { type: 'email' }, limit: 1 });
    expect(listed.status).toBe(200);
    expect(listed.data.suppressions).toHaveLength(1);
    const next = await post('/v1/privacy/suppressions/list', apiKey, {
      filters: { type: 'email' },
      limit: 1,
      cursor: listed.data.nextCursor,
    });
    expect([...listed.data.suppressions, ...next.data.suppressions].map((s: { id: string }) => s.id).sort()).toEqual(
      created.data.suppressions.map((s: { id: string }) => s.id).sort(),
    );
    expect(next.data.nextCursor).toBeNull();

    const deleted = await post('/v1/privacy/suppressions/delete', apiKey, { id: sup.id });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.data).toEqual({ id: sup.id, deleted: true });
    expect((await post('/v1/privacy/suppressions/delete', apiKey, { id: sup.id })).error?.code).toBe('not_found');
    expect((await exportText(apiKey, campaign.id)).text).toContain(PERSON.email.toLowerCase());
    expect(await personInResults(apiKey, campaign.id)).toEqual({ person: 1, contacts: 3 });
  });

  it('refuses a value that does not normalize with 400 naming the field, without echoing it, and stores nothing', async () => {
    const { apiKey } = await newOrganizationHere({ name: 'Privacy invalid' });
    const bad = `0170-${P}`;
    const res = await post('/v1/privacy/suppressions/create', apiKey, {
      identifiers: [
        { type: 'email', value: NEVER_STORED },
        { type: 'phone', value: bad },
      ],
      reason: 'opt_out',
    });
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe('invalid_request');
    expect(res.error?.details.issues.join('\n')).toMatch(/^identifiers\[1\]\.value: must be an E\.164 phone number/m);
    expect(JSON.stringify(res.body)).not.toContain(bad);
    expect((await post('/v1/privacy/suppressions/list', apiKey, {})).data.suppressions).toEqual([]);
  });

  it('refuses a phone that is not written in E.164 on both creates, naming the field and the form', async () => {
    const { apiKey } = await newOrganizationHere({ name: 'Privacy phone form' });
    for (const value of ['+1 (555) 123-4567', '+1.555.123.4567', ' +15551234567']) {
      const suppression = await post('/v1/privacy/suppressions/create', apiKey, {
        identifiers: [{ type: 'phone', value }],
        reason: 'opt_out',
      });
      const erasure = await post('/v1/privacy/erasures/create', apiKey, {
        identifiers: [
          { type: 'email', value: NEVER_STORED },
          { type: 'phone', value },
        ],
        regime: 'gdpr',
        requestRef: `PHONE-${P}`,
      });
      expect([suppression.status, erasure.status, suppression.error?.code, erasure.error?.code], value).toEqual([
        400,
        400,
        'invalid_request',
        'invalid_request',
      ]);
      expect(suppression.error?.details.issues.join('\n')).toMatch(
        /^identifiers\[0\]\.value: must be an E\.164 phone number.*e\.g\. \+15551234567/m,
      );
      expect(erasure.error?.details.issues.join('\n')).toMatch(/^identifiers\[1\]\.value: must be an E\.164 phone number/m);
    }
    expect((await post('/v1/privacy/suppressions/list', apiKey, {})).data.suppressions).toEqual([]);
    expect((await post('/v1/privacy/erasures/list', apiKey, {})).data.erasures).toEqual([]);
  });

  it('make a new launch refund an account whose found contacts are all suppressed (not_found)', async () => {
    const { apiKey } = await newOrganizationHere({ name: 'Privacy refund', smbCredits: 100 });
    const sup = await post('/v1/privacy/suppressions/create', apiKey, {
      identifiers: [{ type: 'linkedin_url', value: PERSON.linkedin }],
      reason: 'customer_request',
    });
    expect(sup.status).toBe(200);
    const campaign = await enrichedCampaign(apiKey, [onlyPerson.accountId, shared.accountId]);
    // Two charged at launch, the account left without a contact refunded at completion.
    expect(campaign.credits.charged).toBe(1);
    expect(campaign.results.totalContactsFound).toBe(1);
    const outcomes = await post('/v1/campaigns/accounts', apiKey, { campaignId: campaign.id });
    expect(Object.fromEntries(outcomes.data.accounts.map((a: { accountId: string; outcome: string }) => [a.accountId, a.outcome]))).toEqual(
      { [onlyPerson.accountId]: 'not_found', [shared.accountId]: 'found' },
    );
    // Another organization is not affected by this one's suppression.
    const { apiKey: other } = await newOrganizationHere({ name: 'Privacy refund other' });
    expect((await enrichedCampaign(other, [onlyPerson.accountId])).credits.charged).toBe(1);
  });

  it('racing a running workflow (fast-check on the moment): once answered, no read delivers the contact', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 400 }), async (delayMs) => {
        const { apiKey } = await newOrganizationHere({ name: 'Privacy race' });
        const created = await post('/v1/campaigns/create', apiKey, {
          name: 'race',
          accountIds: [shared.accountId, onlyPerson.accountId, plain.accountId],
        });
        await post('/v1/campaigns/enrich', apiKey, { campaignId: created.data.id });
        await sleep(delayMs);
        const sup = await post('/v1/privacy/suppressions/create', apiKey, {
          identifiers: [{ type: 'phone', value: PERSON.phone }],
          reason: 'opt_out',
        });
        expect(sup.status).toBe(200);
        await waitFor(apiKey, created.data.id);
        const { text } = await exportText(apiKey, created.data.id);
        expect(text).not.toContain(`zed-${P}`);
        expect((await personInResults(apiKey, created.data.id)).person).toBe(0);
        const found = await contactsFound(apiKey, created.data.id);
        expect(found[shared.accountId]).toBe(1);
        expect([0, null]).not.toContain(found[plain.accountId]);
        expect(found[onlyPerson.accountId] ?? 0).toBe(0);
      }),
      { numRuns: 4 },
    );
  });
});

describe('erasures', () => {
  it('one job per requestRef: suppressed at once, results rewritten, exports deleted, completed with a receipt that verifies against the served keys, one event', async () => {
    const { apiKey, organizationId } = await newOrganizationHere({ name: 'Privacy erase' });
    const first = await enrichedCampaign(apiKey, [shared.accountId, plain.accountId]);
    const second = await enrichedCampaign(apiKey, [onlyPerson.accountId]);
    const oldExport = await exportText(apiKey, first.id);
    expect(oldExport.text).toContain(PERSON.email.toLowerCase());
    expect(await personInResults(apiKey, first.id)).toEqual({ person: 1, contacts: 3 });
    expect(await personInResults(apiKey, second.id)).toEqual({ person: 1, contacts: 1 });

    const body = {
      identifiers: [
        { type: 'email', value: PERSON.email },
        { type: 'phone', value: PERSON.phone },
      ],
      regime: 'gdpr',
      requestRef: `DSR-${P}`,
    };
    const [a, b] = await Promise.all([
      post('/v1/privacy/erasures/create', apiKey, body),
      post('/v1/privacy/erasures/create', apiKey, body),
    ]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.data.id).toBe(a.data.id);
    expect(a.data.identifiers.map((i: { type: string }) => i.type)).toEqual(['email', 'phone']);
    expect(Object.keys(a.data).sort()).toEqual([
      'completedAt',
      'createdAt',
      'id',
      'identifiers',
      'receipt',
      'regime',
      'requestRef',
      'result',
      'status',
    ]);

    const done = await waitErasure(apiKey, a.data.id);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({
      contactsRemoved: 2,
      resultObjectsRewritten: 2,
      exportsDeleted: 1,
      campaignIds: [first.id, second.id].sort(),
    });
    // The same requestRef once more: the same erasure, no second job.
    const third = await post('/v1/privacy/erasures/create', apiKey, { ...body, regime: 'ccpa' });
    expect(third.data).toEqual(done);

    // The old export URL stops working; the stored parts no longer hold the person.
    expect((await fetch(oldExport.url)).status).toBe(404);
    const parts = await objectsUnder(`campaigns/${organizationId}/`);
    expect(parts.length).toBeGreaterThan(0);
    // Neither the CSV cells nor the JSON of a stored part (CEP4) holds the person; the others' stay readable.
    for (const [key, bytes] of parts) {
      expect(bytes.includes(`zed-${P}`), key).toBe(false);
      expect(bytes.includes(PERSON.email.toLowerCase()), key).toBe(false);
      if (key.endsWith('.bin')) expect(bytes.startsWith('CEP4'), key).toBe(true);
    }
    expect(await personInResults(apiKey, first.id)).toEqual({ person: 0, contacts: 2 });
    expect(await personInResults(apiKey, second.id)).toEqual({ person: 0, contacts: 0 });

    // The erasure's suppression is locked.
    const sups = await post('/v1/privacy/suppressions/list', apiKey, {});
    expect(sups.data.suppressions.map((s: { origin: string }) => s.origin)).toEqual(['erasure', 'erasure']);
    const locked = await post('/v1/privacy/suppressions/delete', apiKey, { id: sups.data.suppressions[0].id });
    expect(locked.status).toBe(409);
    expect(locked.error).toMatchObject({ code: 'suppression_locked', details: { id: sups.data.suppressions[0].id } });

    // The receipt verifies against GET /.well-known/jwks.json, and not with a changed payload.
    const jwks = await (await fetch(`${api()}/.well-known/jwks.json`)).json();
    const keySet = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
    const verified = await compactVerify(done.receipt, keySet);
    expect(verified.protectedHeader.alg).toBe('ES256');
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual({
      erasureId: done.id,
      organizationId,
      requestRef: done.requestRef,
      regime: 'gdpr',
      identifiers: done.identifiers,
      result: done.result,
      completedAt: done.completedAt,
    });
    const [header, payload, signature] = done.receipt.split('.');
    const changed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    changed.result.contactsRemoved = 0;
    await expect(
      compactVerify(`${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`, keySet),
    ).rejects.toThrow();

    // Exactly one privacy.erasure_completed event, carrying the erasure.
    const events = await ddb.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
        ExpressionAttributeValues: { ':pk': keys.webhooks(organizationId), ':sk': 'EVENT#' },
      }),
    );
    const erasureEvents = (events.Items ?? []).filter((item) => item.eventType === 'privacy.erasure_completed');
    expect(erasureEvents).toHaveLength(1);
    expect(erasureEvents[0]!.data.erasure.id).toBe(done.id);

    // A fresh export holds no cell of the person; the list shows the erasure.
    expect((await exportText(apiKey, first.id)).text).not.toContain(`zed-${P}`);
    expect(
      (await post('/v1/privacy/erasures/list', apiKey, { filters: { status: 'completed' } })).data.erasures.map(
        (e: { id: string }) => e.id,
      ),
    ).toEqual([done.id]);
    expect((await post('/v1/privacy/erasures/get', apiKey, { id: `era_${'1'.repeat(21)}` })).error?.code).toBe('not_found');
  });

  it('a job a crash stopped resumes at the next start from its saved progress, and completes with the first run’s counts', async () => {
    const { apiKey, organizationId } = await newOrganizationHere({ name: 'Privacy resume' });
    const first = await enrichedCampaign(apiKey, [shared.accountId, plain.accountId]);
    const second = await enrichedCampaign(apiKey, [onlyPerson.accountId]);
    const oldExport = await exportText(apiKey, first.id);
    // The job as erasures/create leaves it, but never started (its process died before): pending, suppressed.
    const id = await pendingErasure(organizationId, PERSON.email, `RESUME-${P}`);
    expect((await suppressions().unfinishedErasures(1000)).map((job) => job.id)).toContain(id);
    // A first run dies after rewriting every part and deleting the export (before signing): the job stays running.
    const crash = new Error('killed');
    await expect(
      runErasure(
        {
          ...erasureJobDependencies(),
          purgeSavedAnswers: () => Promise.reject(crash),
        },
        organizationId,
        id,
      ),
    ).rejects.toBe(crash);
    expect((await post('/v1/privacy/erasures/get', apiKey, { id })).data.status).toBe('running');
    expect((await fetch(oldExport.url)).status).toBe(404);
    expect(await personInResults(apiKey, second.id)).toEqual({ person: 0, contacts: 0 });

    // The restart: the local stack resumes every unfinished job (infra/local/stack.ts).
    expect(await resumeErasures(new Set([organizationId]))).toBe(1);
    const done = await waitErasure(apiKey, id);
    expect(done.status).toBe('completed');
    // The counts of the first run, carried by its progress (the rerun itself found nothing left to remove).
    expect(done.result).toEqual({
      contactsRemoved: 2,
      resultObjectsRewritten: 2,
      exportsDeleted: 1,
      campaignIds: [first.id, second.id].sort(),
    });
    expect(done.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await suppressions().unfinishedErasures(1000)).map((job) => job.id)).not.toContain(id);
    expect(await resumeErasures(new Set([organizationId]))).toBe(0);
  });

  it('one run at a time: a second start while a run holds the job touches nothing; a dead run is taken over once its lease lapses', async () => {
    const { apiKey, organizationId } = await newOrganizationHere({ name: 'Privacy one run' });
    const first = await enrichedCampaign(apiKey, [shared.accountId, plain.accountId]);
    const second = await enrichedCampaign(apiKey, [onlyPerson.accountId]);
    await exportText(apiKey, first.id);
    const pendingJob = (requestRef: string) => pendingErasure(organizationId, PERSON.email, requestRef);
    // Reads of result parts by a run, counted.
    const counting = () => {
      const deps = erasureJobDependencies();
      const counter = { partsRead: 0 };
      const readPart = deps.results.readPart.bind(deps.results);
      deps.results = { ...deps.results, readPart: (key: string) => (counter.partsRead++, readPart(key)) };
      return { deps, counter };
    };

    // Run A holds the job and is stopped before it signs; run B starts meanwhile (a second create, a redelivered message).
    const id = await pendingJob(`ONE-RUN-${P}`);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reachedPurge!: () => void;
    const atPurge = new Promise<void>((resolve) => (reachedPurge = resolve));
    const a = counting();
    const runA = runErasure(
      {
        ...a.deps,
        purgeSavedAnswers: async (...args) => {
          reachedPurge();
          await held;
          return a.deps.purgeSavedAnswers(...args);
        },
      },
      organizationId,
      id,
    );
    await atPurge;
    const b = counting();
    const duringA = await runErasure(b.deps, organizationId, id);
    expect(duringA?.status).toBe('running');
    expect(b.counter.partsRead).toBe(0);
    release();
    const done = await runA;
    expect(done?.status).toBe('completed');
    expect(done?.result).toEqual({
      contactsRemoved: 2,
      resultObjectsRewritten: 2,
      exportsDeleted: 1,
      campaignIds: [first.id, second.id].sort(),
    });
    expect(a.counter.partsRead).toBeGreaterThan(0);
    expect(await personInResults(apiKey, second.id)).toEqual({ person: 0, contacts: 0 });

    // A run that dies holding a job: another start within the lease leaves it; one after the lease takes it over and completes it.
    const orphan = await pendingJob(`ORPHAN-${P}`);
    const crash = new Error('killed');
    await expect(
      runErasure({ ...erasureJobDependencies(), purgeSavedAnswers: () => Promise.reject(crash) }, organizationId, orphan),
    ).rejects.toBe(crash);
    expect((await runErasure(erasureJobDependencies(), organizationId, orphan))?.status).toBe('running');
    const afterLease = () => new Date(Date.now() + (ERASURE_LEASE_SECONDS + 1) * 1000);
    const takenOver = await runErasure(erasureJobDependencies(), organizationId, orphan, afterLease);
    expect(takenOver?.status).toBe('completed');
    expect((await suppressions().unfinishedErasures(1000)).map((job) => job.id)).not.toContain(orphan);
  });

  it('purges the saved idempotent answers that hold the person, and only those', async () => {
    const { apiKey, organizationId } = await newOrganizationHere({ name: 'Privacy purge' });
    const personal = (value: string): RawIdentifier => ({ type: 'email', value });
    const savedAnswer = async (operationId: string, key: string) =>
      (
        await ddb.send(
          new GetCommand({ TableName: TABLE, Key: keys.idempotencyRecord(organizationId, operationId, key), ConsistentRead: true }),
        )
      ).Item;
    const ofPerson = { identifiers: [personal(PERSON.email)], reason: 'opt_out' };
    const ofOther = { identifiers: [personal(`someone-else-${P}@example.com`)], reason: 'opt_out' };
    expect((await post('/v1/privacy/suppressions/create', apiKey, ofPerson, { 'Idempotency-Key': `"person-${P}"` })).status).toBe(200);
    expect((await post('/v1/privacy/suppressions/create', apiKey, ofOther, { 'Idempotency-Key': `"other-${P}"` })).status).toBe(200);
    expect(await savedAnswer('createSuppressions', `person-${P}`)).toMatchObject({ status: 'completed' });

    // An earlier erasure of the person, with a key: its saved answer names the person too. It is saved before the answer is
    // sent, so before the next erasure's job runs, whichever way its own job and its save went.
    const earlier = await post(
      '/v1/privacy/erasures/create',
      apiKey,
      { identifiers: [{ type: 'email', value: PERSON.email }], regime: 'gdpr', requestRef: `PURGE-A-${P}` },
      { 'Idempotency-Key': `"erase-${P}"` },
    );
    expect(earlier.status, JSON.stringify(earlier.body)).toBe(200);
    await waitErasure(apiKey, earlier.data.id);

    const erasure = await post('/v1/privacy/erasures/create', apiKey, {
      identifiers: [{ type: 'email', value: PERSON.email.toUpperCase() }],
      regime: 'gdpr',
      requestRef: `PURGE-B-${P}`,
    });
    expect(erasure.status, JSON.stringify(erasure.body)).toBe(200);
    const done = await waitErasure(apiKey, erasure.data.id);
    expect(done.status).toBe('completed');

    // The answers naming the person (its hash) are gone; the one naming someone else stays.
    expect(await savedAnswer('createSuppressions', `person-${P}`)).toBeUndefined();
    expect(await savedAnswer('createErasure', `erase-${P}`)).toBeUndefined();
    expect(await savedAnswer('createSuppressions', `other-${P}`)).toMatchObject({ status: 'completed' });
    // A retry with a purged key runs again and answers as before (the entry, now locked by the erasure).
    const retried = await post('/v1/privacy/suppressions/create', apiKey, ofPerson, { 'Idempotency-Key': `"person-${P}"` });
    expect(retried.status).toBe(200);
    expect(retried.data.suppressions[0]).toMatchObject({ hash: done.identifiers[0].hash, origin: 'erasure' });
  });

  it('leaves no raw identifier of a request in any log line, table item or object', async () => {
    await erasuresSettled();
    const raw = [NEVER_STORED, PERSON.email, PERSON.email.toLowerCase(), PERSON.linkedin, '+491705550123', PERSON.phone];
    const leaks: string[] = [];
    for (const line of logged) for (const value of raw) if (line.includes(value)) leaks.push(`log: ${line.slice(0, 200)}`);
    // Every item of the table but the warehouse's own contacts (the data sold, not a request's record).
    for await (const page of paginateScan({ client: ddb }, { TableName: TABLE })) {
      for (const item of page.Items ?? []) {
        if (item.type === 'warehouseContacts') continue;
        const text = JSON.stringify(item, (_k, v) => (v instanceof Set ? [...v].map(String) : v));
        for (const value of [NEVER_STORED, PERSON.linkedin, PERSON.phone])
          if (text.includes(value)) leaks.push(`item ${item.pk} ${item.sk}`);
      }
    }
    // Every object: nothing holds a value only ever sent in a request.
    const objects = (
      await Promise.all(organizationIds.flatMap((id) => [objectsUnder(`campaigns/${id}/`), objectsUnder(`exports/${id}/`)]))
    ).flat();
    expect(objects.length).toBeGreaterThan(0);
    for (const [key, bytes] of objects) if (bytes.includes(NEVER_STORED) || bytes.includes(PERSON.linkedin)) leaks.push(`object ${key}`);
    expect(leaks).toEqual([]);
    expect(logged.length).toBeGreaterThan(0);
  });
});

/** Every object under a prefix with its bytes (as text). */
async function objectsUnder(prefix: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  let token: string | undefined;
  do {
    const page = await s3().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      const got = await s3().send(new GetObjectCommand({ Bucket: BUCKET, Key: object.Key! }));
      out.push([object.Key!, Buffer.from(await got.Body!.transformToByteArray()).toString('latin1')]);
    }
    token = page.NextContinuationToken;
  } while (token);
  return out;
}
