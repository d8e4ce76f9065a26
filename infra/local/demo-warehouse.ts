/**
 * The demo warehouse of the local stack (README.md#set-up): a few thousand
 * realistic accounts and contacts, generated deterministically by a seeded
 * faker, with every shape represented: active, closed and inactive accounts;
 * accounts without contacts; contacts with email and mobile, only one, or
 * neither; every seniority. Each record starts blank (lib/warehouse/fields.ts:
 * a field added there is null here until a line below fills it).
 */
import { Faker, en } from '@faker-js/faker';
import { blankAccount, blankContact, SENIORITY_ORDER, type WarehouseAccount, type WarehouseContact } from '../../lib/warehouse/schema';

/** Accounts in the demo warehouse. */
export const DEMO_ACCOUNT_COUNT = 3_000;

const INDUSTRIES = [
  'Software',
  'Financial Services',
  'Healthcare',
  'Manufacturing',
  'Retail',
  'Logistics',
  'Energy',
  'Education',
  'Media',
  'Telecommunications',
];
const DEPARTMENTS = ['engineering', 'sales', 'marketing', 'finance', 'operations', 'hr', 'legal', 'it'];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'CA', 'AU', 'NL', 'ES', 'JP', 'BR'];

/** Demo account ID of index `i` (1-based): `acc_00001` … */
export const demoAccountId = (i: number) => `acc_${String(i).padStart(5, '0')}`;

/** Generates the demo warehouse; the same seed gives the same accounts. */
export function generateDemoWarehouse(count = DEMO_ACCOUNT_COUNT, seed = 20261122): WarehouseAccount[] {
  const faker = new Faker({ locale: [en] });
  faker.seed(seed);
  const accounts: WarehouseAccount[] = [];
  for (let i = 1; i <= count; i++) {
    const company = faker.company.name();
    const domain = `${
      faker.helpers
        .slugify(company)
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '')
        .slice(0, 30) || 'company'
    }.${faker.helpers.arrayElement(['com', 'io', 'net', 'co'])}`;
    const country = faker.helpers.arrayElement(COUNTRIES);
    // ~8 % closed, ~7 % inactive, the rest active.
    const roll = faker.number.float();
    const status = roll < 0.08 ? 'closed' : roll < 0.15 ? 'inactive' : 'active';
    // ~20 % of accounts have no contact at all.
    const contactCount = faker.number.float() < 0.2 ? 0 : faker.number.int({ min: 1, max: 8 });
    const contacts: WarehouseContact[] = [];
    for (let c = 1; c <= contactCount; c++) {
      const firstName = faker.person.firstName();
      const lastName = faker.person.lastName();
      const shape = faker.number.int({ min: 0, max: 3 }); // 0: both, 1: email only, 2: mobile only, 3: neither
      contacts.push({
        ...blankContact(`ct_${String(i).padStart(5, '0')}_${c}`),
        firstName,
        lastName,
        title: faker.person.jobTitle(),
        seniority: faker.helpers.arrayElement(SENIORITY_ORDER),
        department: faker.helpers.arrayElement(DEPARTMENTS),
        email: shape === 0 || shape === 1 ? faker.internet.email({ firstName, lastName, provider: domain }).toLowerCase() : null,
        emailStatus: shape === 0 || shape === 1 ? faker.helpers.arrayElement(['verified', 'unverified', 'catch_all']) : null,
        mobilePhone: shape === 0 || shape === 2 ? faker.phone.number({ style: 'international' }) : null,
        directPhone: faker.number.float() < 0.3 ? faker.phone.number({ style: 'international' }) : null,
        linkedinUrl:
          faker.number.float() < 0.6
            ? `https://www.linkedin.com/in/${faker.helpers.slugify(`${firstName}-${lastName}`).toLowerCase()}-${c}${i}`
            : null,
        country,
      });
    }
    accounts.push({
      ...blankAccount(demoAccountId(i), status),
      name: company,
      domain,
      industry: faker.helpers.arrayElement(INDUSTRIES),
      employeeCount: faker.number.int({ min: 5, max: 50_000 }),
      country,
      contacts,
    });
  }
  return accounts;
}
