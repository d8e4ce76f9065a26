/**
 * The test twin's built-in warehouse and history (docs/test-mode.md), as pure
 * functions of the account IDs: no storage, the same answer every time.
 */
import { describe, expect, it } from 'vitest';
import { testAccount, testAccountKind, testContacts, testWarehouse, TestAccountFailureError } from '../../lib/test-mode/accounts';
import { testAccountHistory, TEST_RECENT_AGE_MS } from '../../lib/test-mode/history';
import { forMode, modeOf } from '../../lib/test-mode/mode';
import {
  API_KEY_PATTERN,
  isTestApiKey,
  newApiKey,
  newOrganizationId,
  newTestApiKey,
  REVOKED_TEST_API_KEY,
  TEST_API_KEY_PATTERN,
  TEST_ORGANIZATION_ID_PATTERN,
  testOrganizationIdOf,
} from '../../lib/ids';
import { testModeHeaders } from '../../lib/http/auth';
import { recencyCutoff, classifyAccount } from '../../lib/enrichment/evaluate';

const DAY_MS = 86_400_000;

describe('test account IDs', () => {
  it('each prefix gives its kind; any other ID is unknown', () => {
    expect(testAccountKind('test_found_1')).toBe('found');
    expect(testAccountKind('test_found_')).toBe('found');
    expect(testAccountKind('test_nocontacts_x')).toBe('nocontacts');
    expect(testAccountKind('test_closed_x')).toBe('closed');
    expect(testAccountKind('test_inactive_x')).toBe('inactive');
    expect(testAccountKind('test_crm_x')).toBe('crm');
    expect(testAccountKind('test_recent_x')).toBe('recent');
    expect(testAccountKind('test_fail_x')).toBe('fail');
    for (const other of ['acc_1', 'test_found', 'TEST_FOUND_1', 'test_other_1', 'xtest_found_1', ''])
      expect(testAccountKind(other), other).toBeUndefined();
  });

  it('a found account has 3 contacts: email and mobile, email only, neither; the same every time', () => {
    const contacts = testContacts('test_found_42');
    expect(contacts.map((c) => [Boolean(c.email), Boolean(c.mobilePhone)])).toEqual([
      [true, true],
      [true, false],
      [false, false],
    ]);
    expect(new Set(contacts.map((c) => c.contactId)).size).toBe(3);
    expect(testContacts('test_found_42')).toEqual(contacts);
    expect(testAccount('test_nocontacts_1')?.contacts).toEqual([]);
    expect(testAccount('test_closed_1')?.status).toBe('closed');
    expect(testAccount('test_inactive_1')?.status).toBe('inactive');
    expect(testAccount('acc_1')).toBeUndefined();
  });
});

describe('the test warehouse', () => {
  it('answers statuses for test IDs only, and accounts with their contacts', async () => {
    const statuses = await testWarehouse.getAccountStatuses([
      'test_found_1',
      'test_closed_1',
      'test_inactive_1',
      'test_crm_1',
      'test_recent_1',
      'test_fail_1',
      'test_nocontacts_1',
      'acc_1',
    ]);
    expect(Object.fromEntries([...statuses].map(([id, account]) => [id, account.status]))).toEqual({
      test_found_1: 'active',
      test_closed_1: 'closed',
      test_inactive_1: 'inactive',
      test_crm_1: 'active',
      test_recent_1: 'active',
      test_fail_1: 'active',
      test_nocontacts_1: 'active',
    });
    const accounts = await testWarehouse.getAccounts(['test_found_1', 'acc_1', 'test_nocontacts_1']);
    expect(accounts.map((a) => [a.accountId, a.contacts.length])).toEqual([
      ['test_found_1', 3],
      ['test_nocontacts_1', 0],
    ]);
  });

  it('fails a batch that holds a test_fail_ account', async () => {
    await expect(testWarehouse.getAccounts(['test_found_1', 'test_fail_2'])).rejects.toBeInstanceOf(TestAccountFailureError);
  });
});

describe('the test history', () => {
  it('test_crm_ is a CRM target; test_recent_ was enriched a minute ago, inside any window of a day or more', async () => {
    const now = new Date();
    for (const days of [1, 30, 3650]) {
      const cutoff = recencyCutoff(days, now)!;
      const facts = await testAccountHistory.getFacts('org_test_x', ['test_recent_1', 'test_crm_1', 'test_found_1'], {
        recency: true,
        enrichedAfter: cutoff,
      });
      expect(classifyAccount('active', facts.get('test_recent_1'), cutoff), String(days)).toBe('recentlyEnriched');
      expect(classifyAccount('active', facts.get('test_crm_1'), cutoff)).toBe('crmExcluded');
      expect(classifyAccount('active', facts.get('test_found_1'), cutoff)).toBe('eligible');
    }
    // No window: recency is not read, test_recent_ is eligible.
    const facts = await testAccountHistory.getFacts('org_test_x', ['test_recent_1'], { recency: false });
    expect(classifyAccount('active', facts.get('test_recent_1'), recencyCutoff(null, now))).toBe('eligible');
    expect(TEST_RECENT_AGE_MS).toBeLessThan(DAY_MS);
  });

  it('records nothing', async () => {
    expect(await testAccountHistory.addCrmTargets('org_test_x', ['a'])).toBe(0);
    await testAccountHistory.recordCompletion('org_test_x', 'camp_x', new Date().toISOString(), 'campaigns/x/eligible.txt');
  });
});

describe('keys, twins and the mode', () => {
  it('test keys and twin IDs have their own shapes; a twin ID is derived from its live ID', () => {
    const key = newTestApiKey();
    expect(key).toMatch(TEST_API_KEY_PATTERN);
    expect(key).toMatch(API_KEY_PATTERN);
    expect(isTestApiKey(key)).toBe(true);
    expect(isTestApiKey(newApiKey())).toBe(false);
    expect(REVOKED_TEST_API_KEY).toMatch(TEST_API_KEY_PATTERN);
    const live = newOrganizationId();
    expect(testOrganizationIdOf(live)).toMatch(TEST_ORGANIZATION_ID_PATTERN);
    expect(testOrganizationIdOf(live)).toBe(testOrganizationIdOf(live));
    expect(testOrganizationIdOf(live)).not.toBe(testOrganizationIdOf(newOrganizationId()));
    expect(modeOf(live)).toBe('live');
    expect(modeOf(testOrganizationIdOf(live))).toBe('test');
    expect(forMode(testOrganizationIdOf(live), { live: () => 'live', test: () => 'test' })).toBe('test');
  });

  it('Test-Mode: true marks an answer to a test-shaped key only', () => {
    expect(testModeHeaders(`Bearer ${newTestApiKey()}`)).toEqual({ 'test-mode': 'true' });
    expect(testModeHeaders(`bearer   ${REVOKED_TEST_API_KEY}`)).toEqual({ 'test-mode': 'true' });
    expect(testModeHeaders(`Bearer ${newApiKey()}`)).toEqual({});
    expect(testModeHeaders(undefined)).toEqual({});
    expect(testModeHeaders('Basic cek_test_x')).toEqual({});
  });
});
