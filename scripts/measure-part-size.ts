/**
 * Bytes of one result part (lib/results/parts.ts) for a batch of 1,000
 * accounts × 10 contacts, and how many of them are the export's CSV cells,
 * the results' JSON and the contacts' identifier digests:
 * the measurement behind the stored result format (docs/data-model.md
 * "Result parts"). Run: `npx tsx scripts/measure-part-size.ts`.
 */
import { encodePart, ResultPartReader } from '../lib/results/parts';
import { missingAccount } from '../lib/warehouse/schema';

const contacts = (i: number) =>
  Array.from({ length: 10 }, (_, k) => ({
    contactId: `con_${i}_${k}`,
    firstName: 'Firstname',
    lastName: 'Lastname',
    title: 'Director of Engineering',
    seniority: ['c_suite', 'vp', 'director', 'manager'][k % 4]!,
    department: 'engineering',
    email: `first.last${k}@company${i}.example.com`,
    emailStatus: 'valid',
    mobilePhone: k % 2 ? '+15551234567' : null,
    directPhone: null,
    linkedinUrl: `https://www.linkedin.com/in/person-${i}-${k}`,
    country: 'US',
  }));
const accounts = Array.from({ length: 1_000 }, (_, i) => ({
  ...missingAccount(`acc_${String(i).padStart(6, '0')}`),
  name: `Company ${i} Inc`,
  domain: `company${i}.example.com`,
  industry: 'Software',
  employeeCount: 250,
  country: 'US',
  contacts: contacts(i),
}));

const part = encodePart(accounts);
let cells = 0;
let json = 0;
let digests = 0;
const reader = new ResultPartReader(part);
while (reader.nextAccount()) {
  cells += reader.accountEnd - reader.accountStart;
  json += reader.accountJsonEnd - reader.accountJsonStart;
  while (reader.nextContact()) {
    cells += reader.contactEnd - reader.contactStart;
    json += reader.contactJsonEnd - reader.contactJsonStart;
    digests += reader.contactDigestsEnd - reader.contactDigestsStart;
  }
}
console.log(JSON.stringify({ partBytes: part.length, csvCellBytes: cells, jsonBytes: json, digestBytes: digests }));
