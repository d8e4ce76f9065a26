/**
 * Result part layout version 4 (lib/results/parts.ts; docs/data-model.md
 * "Result parts"): a part names its fields in a header derived from
 * lib/warehouse/fields.ts, and readers map stored values by name, so a field
 * added to the declaration needs no new layout: a part written with a
 * shorter field list reads with the new column blank in the CSV and null in
 * the results' JSON. Each contact carries its identifier digests, and the
 * suppression check compares those stored bytes: it never decodes a
 * contact's JSON nor hashes its values.
 */
import { faker } from '@faker-js/faker';
import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { CURRENT_FIELDS, encodePart, headerOf, ResultPartReader, type PartFields } from '../../lib/results/parts';
import { CSV_COLUMNS, type ContactSelection, type EnrichedAccount } from '../../lib/results/csv';
import { resultItem } from '../../lib/results/json';
import { csvChunks, type ExportCounts } from '../../lib/exports/rows';
import { deliverable } from '../../lib/results/deliverable';
import { policyOf } from '../../lib/privacy/deliverable';
import { ACCOUNT_FIELDS, CONTACT_FIELDS } from '../../lib/warehouse/fields';
import { contactHashes, DIGEST_BYTES } from '../../lib/warehouse/identifiers';
import { blankContact, missingAccount } from '../../lib/warehouse/schema';
import { asLegacyPart } from '../support/legacy-parts';

const ENRICHED_AT = '2026-11-27T12:00:00.000Z';
const ALL: ContactSelection = { hasEmail: false, hasMobilePhone: false };

function accounts(count: number, seed: number): EnrichedAccount[] {
  faker.seed(seed);
  return Array.from({ length: count }, (_, i) => ({
    ...missingAccount(`acc_${i}`),
    name: faker.company.name(),
    domain: faker.internet.domainName(),
    industry: faker.helpers.arrayElement([faker.commerce.department(), null, '=cmd|x']),
    employeeCount: faker.helpers.arrayElement([faker.number.int(9000), null]),
    country: faker.location.countryCode(),
    contacts: Array.from({ length: faker.number.int(4) }, (_, j) => ({
      ...blankContact(`ct_${i}_${j}`),
      firstName: faker.person.firstName(),
      seniority: faker.helpers.arrayElement(['vp', 'manager', null]),
      department: faker.helpers.arrayElement([faker.person.jobArea(), null, '+1 dept']),
      email: faker.helpers.arrayElement([faker.internet.email(), null]),
      mobilePhone: faker.helpers.arrayElement([`+1555${faker.string.numeric(7)}`, null]),
      linkedinUrl: faker.helpers.arrayElement([`https://www.linkedin.com/in/${faker.string.alpha(8)}`, null]),
    })),
  }));
}

/** The export's bytes of parts, through the export's own writer. */
async function exportOf(parts: Uint8Array[], selection = ALL, policy = {}) {
  const counts: ExportCounts = { accounts: 0, contacts: 0, rows: 0 };
  const chunks: Buffer[] = [];
  for await (const chunk of csvChunks(parts, deliverable(selection, policy), ENRICHED_AT, counts)) chunks.push(chunk);
  return { bytes: Buffer.concat(chunks), counts };
}

/** The results' items of a part, as the results page builds them (lib/exports/results.ts). */
function itemsOf(part: Uint8Array, policy = {}) {
  const reader = new ResultPartReader(part);
  const delivery = deliverable(ALL, policy);
  const items = [];
  let seq = 0;
  while (reader.nextAccount()) {
    delivery.beginAccount();
    const contacts: string[] = [];
    while (delivery.nextContact(reader)) contacts.push(reader.contactJson());
    items.push(resultItem(++seq, reader.accountJson(), contacts));
  }
  return items;
}

/** The same accounts with some fields emptied: what a part without those fields must read as. */
const without = (list: EnrichedAccount[], accountKey: string, contactKey: string): EnrichedAccount[] =>
  list.map((a) => ({ ...a, [accountKey]: null, contacts: a.contacts.map((c) => ({ ...c, [contactKey]: null })) }));

describe('result part layout 4: a header naming the fields, read by name', () => {
  it('writes the header of today’s fields, derived from lib/warehouse/fields.ts', () => {
    const part = encodePart(accounts(2, 1));
    expect(part.subarray(0, 4).toString('latin1')).toBe('CEP4');
    const header = JSON.parse(part.toString('utf8', 8, 8 + part.readUInt32LE(4))) as unknown;
    expect(header).toEqual(headerOf(CURRENT_FIELDS));
    expect([...headerOf(CURRENT_FIELDS).account.cells, ...headerOf(CURRENT_FIELDS).contact.cells, 'enriched_at']).toEqual(CSV_COLUMNS);
  });

  it('reads a part written with a shorter field list: the missing column blank in the CSV, null in the JSON', async () => {
    // A part written before `industry` and `department` were declared.
    const older: PartFields = {
      account: ACCOUNT_FIELDS.filter((f) => f.key !== 'industry'),
      contact: CONTACT_FIELDS.filter((f) => f.key !== 'department'),
    };
    const list = accounts(30, 7);
    const part = encodePart(list, older);
    expect(JSON.parse(part.toString('utf8', 8, 8 + part.readUInt32LE(4)))).toEqual(headerOf(older));
    const emptied = without(list, 'industry', 'department');
    // CSV: byte for byte the export of the same accounts with those fields empty.
    const read = await exportOf([part]);
    expect(read.bytes.equals((await exportOf([encodePart(emptied)])).bytes)).toBe(true);
    const rows = parse(read.bytes, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.every((row) => row.account_industry === '' && row.department === '')).toBe(true);
    expect(rows.some((row) => row.first_name !== '' && row.account_name !== '')).toBe(true);
    // JSON: the same items with those keys null.
    const items = itemsOf(part);
    expect(items).toEqual(itemsOf(encodePart(emptied)));
    expect(items.every((item) => item.account.industry === null && item.contacts.every((c) => c.department === null))).toBe(true);
    expect(items.flatMap((item) => item.contacts).length).toBe(list.reduce((n, a) => n + a.contacts.length, 0));
  });

  it('reads a part whose fields are in another order, or hold a field no longer declared, by name', async () => {
    const list = accounts(10, 3);
    const reordered: PartFields = {
      account: [...ACCOUNT_FIELDS].reverse(),
      contact: [
        ...CONTACT_FIELDS.filter((f) => f.key !== 'email'),
        { key: 'retired', type: 'text', column: 'retired_col', json: 'retired', example: null, meaning: 'A field since removed.' },
        CONTACT_FIELDS.find((f) => f.key === 'email')!,
      ],
    };
    const part = encodePart(list, reordered);
    expect((await exportOf([part])).bytes.equals((await exportOf([encodePart(list)])).bytes)).toBe(true);
    expect(itemsOf(part)).toEqual(itemsOf(encodePart(list)));
  });

  it('still reads parts of layouts 3, 2 and 1 (until the removal the module comment dates): the same CSV and, for layouts 3 and 2, the same JSON', async () => {
    const list = accounts(20, 11);
    const current = encodePart(list);
    const expected = (await exportOf([current])).bytes;
    for (const version of [3, 2, 1] as const) expect((await exportOf([asLegacyPart(current, version)])).bytes.equals(expected)).toBe(true);
    for (const version of [3, 2] as const) expect(itemsOf(asLegacyPart(current, version))).toEqual(itemsOf(current));
  });

  it('stores each contact and account head as the answer’s JSON text, keys from lib/warehouse/fields.ts, spliced into items unparsed', () => {
    const list = accounts(6, 13);
    const reader = new ResultPartReader(encodePart(list));
    let a = 0;
    while (reader.nextAccount()) {
      const account = list[a++]!;
      expect(Object.keys(JSON.parse(reader.accountJson()) as object)).toEqual(['accountId', 'outcome', 'account']);
      expect(Object.keys((JSON.parse(reader.accountJson()) as { account: object }).account)).toEqual(
        ACCOUNT_FIELDS.filter((f) => 'json' in f).map((f) => (f as { json: string }).json),
      );
      const contacts: string[] = [];
      while (reader.nextContact()) {
        const text = reader.contactJson();
        expect(Object.keys(JSON.parse(text) as object)).toEqual(
          CONTACT_FIELDS.filter((f) => 'json' in f).map((f) => (f as { json: string }).json),
        );
        contacts.push(text);
      }
      // The item is the stored texts spliced: its text holds each stored contact text as it is.
      const item = reader.itemText(a, contacts);
      for (const text of contacts) expect(item.includes(text)).toBe(true);
      expect(JSON.parse(item)).toEqual(resultItem(a, reader.accountJson(), contacts));
      expect((JSON.parse(item) as { seq: number; accountId: string }).accountId).toBe(account.accountId);
      expect(Object.keys(JSON.parse(reader.itemText(a, contacts, 'account')) as object)).toEqual([
        'type',
        'seq',
        'accountId',
        'outcome',
        'account',
        'contacts',
      ]);
    }
    expect(a).toBe(6);
  });
});

describe('result part layout 4: identifier digests decide what may be delivered', () => {
  it('withholds a suppressed contact by its stored digests on every path, without decoding its JSON', async () => {
    const list = accounts(40, 5);
    const victim = list.flatMap((a) => a.contacts).find((c) => c.email !== null)!;
    const policy = policyOf(new Set(contactHashes({ ...blankContact('x'), email: victim.email }).map((hash) => hash.slice(0, 16))));
    const part = encodePart(list);
    // Damage every contact's JSON (same length): the check must not need it.
    const damaged = Buffer.from(part);
    const reader = new ResultPartReader(damaged);
    while (reader.nextAccount()) while (reader.nextContact()) damaged.fill(0x7e, reader.contactJsonStart, reader.contactJsonEnd);
    const withheld = (await exportOf([damaged], ALL, policy)).bytes.toString('utf8');
    const open = (await exportOf([damaged])).bytes.toString('utf8');
    expect(open.includes(victim.email!)).toBe(true);
    expect(withheld.includes(victim.email!)).toBe(false);
    expect(withheld.includes(victim.contactId)).toBe(false);
    // The results' JSON of the undamaged part leaves it out too.
    expect(JSON.stringify(itemsOf(part, policy)).includes(victim.contactId)).toBe(false);
    expect(JSON.stringify(itemsOf(part)).includes(victim.contactId)).toBe(true);
  });

  it('matches the digests stored in the part, not values hashed again: a contact stored with a suppressed digest is withheld', async () => {
    const list = accounts(5, 9);
    const part = encodePart(list);
    const reader = new ResultPartReader(part);
    reader.nextAccount();
    while (!reader.nextContact()) reader.nextAccount();
    expect(reader.contactDigestsEnd - reader.contactDigestsStart).toBeGreaterThanOrEqual(DIGEST_BYTES);
    const stored = part.toString('hex', reader.contactDigestsStart, reader.contactDigestsStart + 8);
    const id = (JSON.parse(reader.contactJson()) as { contactId: string }).contactId;
    // Overwrite that digest with one of nobody's values: the contact is then delivered, its values unchanged.
    const altered = Buffer.from(part);
    altered.fill(0xab, reader.contactDigestsStart, reader.contactDigestsStart + DIGEST_BYTES);
    const policy = policyOf(new Set([stored]));
    expect(JSON.stringify(itemsOf(part, policy)).includes(`"${id}"`)).toBe(false);
    expect(JSON.stringify(itemsOf(altered, policyOf(new Set([stored])))).includes(`"${id}"`)).toBe(true);
  });
});
