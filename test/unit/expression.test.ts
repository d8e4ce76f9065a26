/**
 * Unit tests of the DynamoDB expression builder (`lib/db/expression.ts`) and
 * the campaign item's owner (`lib/campaigns/item.ts`; docs/data-model.md):
 * placeholders for every attribute, increments from 0, merged changes,
 * status index keys and the item ↔ record mapping.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { campaignItem, statusChange, toCampaignRecord } from '../../lib/campaigns/item';
import * as campaignIs from '../../lib/campaigns/conditions';
import * as campaignChanges from '../../lib/campaigns/changes';
import type { AttemptRecord, CampaignRecord } from '../../lib/campaigns/model';
import { and, merge, updateParts, type Change, type Clause } from '../../lib/db/expression';
import * as keys from '../../lib/db/keys';
import { CAMPAIGN_STATUSES, type CampaignStatus } from '../../lib/errors';

const ORG = 'org_1111111111111111111111';
const ID = 'camp_2222222222222222222222';
const CREATED_AT = '2025-06-01T10:00:00.000Z';
const EXPIRES_AT = '2025-07-01T10:00:00.000Z';

/** SET and REMOVE targets of an UpdateExpression, as attribute names. */
function targets(parts: { UpdateExpression: string; ExpressionAttributeNames: Record<string, string> }) {
  const [, setPart = '', removePart = ''] = /^(?:SET (.*?))?(?: ?REMOVE (.*))?$/.exec(parts.UpdateExpression) ?? [];
  const setNames = setPart
    ? setPart.split(/, (?=#)/).map((assignment) => parts.ExpressionAttributeNames[assignment.split(' = ')[0]!]!)
    : [];
  const removeNames = removePart ? removePart.split(', ').map((placeholder) => parts.ExpressionAttributeNames[placeholder]!) : [];
  return { set: setNames, remove: removeNames };
}

describe('updateParts', () => {
  it('sets attributes through #name and :s_ placeholders, reserved words included', () => {
    expect(updateParts({ set: { status: 'draft', name: 'Q3', token: 't' } })).toEqual({
      UpdateExpression: 'SET #status = :s_status, #name = :s_name, #token = :s_token',
      ExpressionAttributeNames: { '#status': 'status', '#name': 'name', '#token': 'token' },
      ExpressionAttributeValues: { ':s_status': 'draft', ':s_name': 'Q3', ':s_token': 't' },
    });
  });

  it('increments from 0 when the attribute is missing, by a signed delta', () => {
    expect(updateParts({ increment: { smbCredits: -5, ledgerEntries: 1 } })).toEqual({
      UpdateExpression:
        'SET #smbCredits = if_not_exists(#smbCredits, :zero) + :i_smbCredits, #ledgerEntries = if_not_exists(#ledgerEntries, :zero) + :i_ledgerEntries',
      ExpressionAttributeNames: { '#smbCredits': 'smbCredits', '#ledgerEntries': 'ledgerEntries' },
      ExpressionAttributeValues: { ':i_smbCredits': -5, ':i_ledgerEntries': 1, ':zero': 0 },
    });
  });

  it('removes attributes, with no values when nothing else needs one', () => {
    expect(updateParts({ remove: ['launchLock', 'gsi5pk'] })).toEqual({
      UpdateExpression: 'REMOVE #launchLock, #gsi5pk',
      ExpressionAttributeNames: { '#launchLock': 'launchLock', '#gsi5pk': 'gsi5pk' },
    });
  });

  it('joins SET then REMOVE, skips undefined values, and keeps null ones', () => {
    expect(updateParts({ set: { a: undefined, b: null, c: 0 }, increment: { d: 2 }, remove: ['e'] })).toEqual({
      UpdateExpression: 'SET #b = :s_b, #c = :s_c, #d = if_not_exists(#d, :zero) + :i_d REMOVE #e',
      ExpressionAttributeNames: { '#b': 'b', '#c': 'c', '#d': 'd', '#e': 'e' },
      ExpressionAttributeValues: { ':s_b': null, ':s_c': 0, ':i_d': 2, ':zero': 0 },
    });
  });

  it('carries the condition with its own names and values', () => {
    const condition: Clause = { expression: '#status = :c_draft', names: { '#status': 'status' }, values: { ':c_draft': 'draft' } };
    expect(updateParts({ set: { name: 'x' } }, condition)).toEqual({
      UpdateExpression: 'SET #name = :s_name',
      ConditionExpression: '#status = :c_draft',
      ExpressionAttributeNames: { '#status': 'status', '#name': 'name' },
      ExpressionAttributeValues: { ':c_draft': 'draft', ':s_name': 'x' },
    });
    expect(updateParts({ remove: ['x'] }, { expression: 'attribute_exists(pk)' })).toEqual({
      UpdateExpression: 'REMOVE #x',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#x': 'x' },
    });
  });

  it.each([
    ['nothing', {}],
    ['empty parts', { set: {}, increment: {}, remove: [] }],
    ['only undefined values', { set: { a: undefined } }],
  ] as [string, Change][])('throws on an empty change: %s', (_label, change) => {
    expect(() => updateParts(change)).toThrow('An update needs at least one attribute to change');
  });

  it('for any change: every attribute has its placeholder, every placeholder is defined, and no name appears bare', () => {
    // Names start with `a` so that none is an Object.prototype member (see the report on merge).
    const attribute = fc.stringMatching(/^a[A-Za-z0-9]{0,7}$/);
    const changes = fc
      .record({
        set: fc.dictionary(attribute, fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null))),
        increment: fc.dictionary(attribute, fc.integer({ min: -1000, max: 1000 })),
        remove: fc.uniqueArray(attribute, { maxLength: 4 }),
      })
      .map(({ set, increment, remove }) => {
        // One attribute, one action: DynamoDB refuses overlapping paths.
        const inc = Object.fromEntries(Object.entries(increment).filter(([k]) => !(k in set)));
        return { set, increment: inc, remove: remove.filter((k) => !(k in set) && !(k in inc)) };
      })
      .filter((c) => Object.keys(c.set).length + Object.keys(c.increment).length + c.remove.length > 0);
    fc.assert(
      fc.property(changes, (change) => {
        const parts = updateParts(change);
        for (const [k, v] of Object.entries(change.set)) {
          expect(parts.ExpressionAttributeNames[`#${k}`]).toBe(k);
          expect(parts.ExpressionAttributeValues?.[`:s_${k}`]).toBe(v);
        }
        for (const [k, v] of Object.entries(change.increment)) {
          expect(parts.ExpressionAttributeNames[`#${k}`]).toBe(k);
          expect(parts.ExpressionAttributeValues?.[`:i_${k}`]).toBe(v);
          expect(parts.UpdateExpression).toContain(`#${k} = if_not_exists(#${k}, :zero) + :i_${k}`);
          expect(parts.ExpressionAttributeValues?.[':zero']).toBe(0);
        }
        for (const k of change.remove) expect(parts.ExpressionAttributeNames[`#${k}`]).toBe(k);
        const used = parts.UpdateExpression.match(/[#:][A-Za-z0-9_]+/g) ?? [];
        expect(new Set(used.filter((t) => t.startsWith('#')))).toEqual(new Set(Object.keys(parts.ExpressionAttributeNames)));
        expect(new Set(used.filter((t) => t.startsWith(':')))).toEqual(new Set(Object.keys(parts.ExpressionAttributeValues ?? {})));
        const bare = parts.UpdateExpression.replace(/[#:][A-Za-z0-9_]+/g, '').replace(/\b(SET|REMOVE|if_not_exists)\b/g, '');
        expect(bare).toMatch(/^[\s,=+()]*$/);
        expect(targets(parts)).toEqual({ set: [...Object.keys(change.set), ...Object.keys(change.increment)], remove: change.remove });
      }),
      { numRuns: 300 },
    );
  });
});

describe('and', () => {
  it('parenthesizes and joins the clauses, merging their names and values', () => {
    const a: Clause = { expression: 'attribute_exists(pk)' };
    const b: Clause = { expression: '#status = :c_s OR x = :c_x', names: { '#status': 'status' }, values: { ':c_s': 'draft', ':c_x': 1 } };
    const c: Clause = { expression: 'smbCredits >= :c_required', values: { ':c_required': 4 } };
    expect(and(a, b, c)).toEqual({
      expression: '(attribute_exists(pk)) AND (#status = :c_s OR x = :c_x) AND (smbCredits >= :c_required)',
      names: { '#status': 'status' },
      values: { ':c_s': 'draft', ':c_x': 1, ':c_required': 4 },
    });
    expect(and(a)).toEqual({ expression: '(attribute_exists(pk))', names: {}, values: {} });
  });
});

describe('merge', () => {
  it('unites the changes, later ones winning on the same attribute', () => {
    expect(merge({ set: { a: 1, b: 1 }, increment: { n: 1 } }, { set: { b: 2 }, increment: { n: 5, m: -1 } })).toEqual({
      set: { a: 1, b: 2 },
      increment: { n: 5, m: -1 },
      remove: [],
    });
  });

  it('removes each attribute once, and drops the removal of an attribute another part sets or increments', () => {
    expect(
      merge({ remove: ['x', 'y', 'gsi5pk'] }, { set: { gsi5pk: 'k' }, remove: ['x'] }, { increment: { y: 1 }, remove: ['z'] }),
    ).toEqual({
      set: { gsi5pk: 'k' },
      increment: { y: 1 },
      remove: ['x', 'z'],
    });
  });

  it('of nothing is empty', () => {
    expect(merge()).toEqual({ set: {}, increment: {}, remove: [] });
  });
});

describe('statusChange', () => {
  const ref = { organizationId: ORG, id: ID, createdVia: 'api' as const, createdAt: CREATED_AT };

  it.each(CAMPAIGN_STATUSES)('moves to %s with the status list keys of that status', (status) => {
    const indexes = keys.campaignIndexes(ORG, { id: ID, createdAt: CREATED_AT, status, createdVia: 'api' });
    const change = statusChange(ref, status);
    expect(change.set).toEqual({ status, gsi2pk: indexes.gsi2pk, gsi4pk: indexes.gsi4pk });
    expect(change.set?.gsi2pk).toBe(`ORG#${ORG}#CAMPAIGNS#STATUS#${status}`);
    expect(change.set?.gsi4pk).toBe(`ORG#${ORG}#CAMPAIGNS#STATUS#${status}#VIA#api`);
    expect(change.remove).toEqual(['gsi5pk', 'expirySk']);
  });

  it('puts an enriched campaign with a resultsExpireAt in the expiry index', () => {
    expect(statusChange(ref, 'enriched', EXPIRES_AT)).toEqual({
      set: {
        status: 'enriched',
        gsi2pk: `ORG#${ORG}#CAMPAIGNS#STATUS#enriched`,
        gsi4pk: `ORG#${ORG}#CAMPAIGNS#STATUS#enriched#VIA#api`,
        gsi5pk: `ORG#${ORG}#ENRICHED`,
        expirySk: `${EXPIRES_AT}#${ID}`,
      },
      remove: [],
    });
  });

  it.each(CAMPAIGN_STATUSES.filter((s) => s !== 'enriched'))('keeps %s out of the expiry index even with a resultsExpireAt', (status) => {
    const change = statusChange(ref, status, EXPIRES_AT);
    expect(change.set).not.toHaveProperty('gsi5pk');
    expect(change.set).not.toHaveProperty('expirySk');
    expect(change.remove).toEqual(['gsi5pk', 'expirySk']);
  });

  it('uses the campaign surface in the combined key', () => {
    expect(statusChange({ ...ref, createdVia: 'data_cube' }, 'tam_only').set?.gsi4pk).toBe(
      `ORG#${ORG}#CAMPAIGNS#STATUS#tam_only#VIA#data_cube`,
    );
  });
});

const attempt: AttemptRecord = {
  id: 'att_3333333333333333333333',
  startedAt: CREATED_AT,
  eligible: 4,
  charged: 4,
  creditsPerAccount: 1,
  eligibleObjectKey: `campaigns/${ORG}/${ID}/eligible.txt`,
  executionArn: 'arn:aws:states:us-east-1:000000000000:execution:enrich:att',
};

/** A stored campaign of `status`, with the optional parts that status carries. */
function record(status: CampaignStatus, over: Partial<CampaignRecord> = {}): CampaignRecord {
  return {
    id: ID,
    organizationId: ORG,
    name: 'Q3 outbound',
    status,
    createdVia: 'api',
    excludeEnrichedWithinDays: 30,
    createdAt: CREATED_AT,
    accountsRequested: 6,
    accountsObjectKey: `campaigns/${ORG}/${ID}/accounts.txt`,
    accountsEligible: status === 'draft' ? null : 4,
    accountsExcluded: status === 'draft' ? null : { total: 2, invalid: 1, recentlyEnriched: 0, crmExcluded: 1 },
    creditsCharged: status === 'draft' ? 0 : 4,
    lastEnrichment: null,
    ...(status === 'enriched' || status === 'expired'
      ? {
          completedAt: '2025-06-01T11:00:00.000Z',
          resultsExpireAt: EXPIRES_AT,
          results: { totalAccounts: 4, totalContactsFound: 9, pctAccountsWithContact: 0.75, pctAccountsWithMobile: 0.5 },
        }
      : {}),
    ...(status === 'enriching' || status === 'enriched' ? { attempt } : {}),
    ...over,
  };
}

describe('campaignItem / toCampaignRecord', () => {
  it.each(CAMPAIGN_STATUSES)('round-trips a %s campaign', (status) => {
    const r = record(status);
    const item = campaignItem(r);
    expect(item).toMatchObject({ ...keys.campaign(ORG, ID), ...keys.campaignIndexes(ORG, r), type: 'campaign' });
    expect(toCampaignRecord(item)).toEqual(r);
  });

  it('indexes by expiry only an enriched campaign', () => {
    expect(campaignItem(record('enriched'))).toMatchObject({ gsi5pk: `ORG#${ORG}#ENRICHED`, expirySk: `${EXPIRES_AT}#${ID}` });
    expect(campaignItem(record('expired'))).not.toHaveProperty('gsi5pk');
  });

  it('strips every key and bookkeeping attribute, and only those', () => {
    const r = record('enriched', { lastEnrichment: { status: 'failed', startedAt: CREATED_AT, endedAt: null, refunded: true } });
    const item = {
      ...campaignItem(r),
      gsi6pk: keys.recencyPending(ORG).gsi6pk,
      launchLock: { token: 't', expiresAt: CREATED_AT },
    };
    const back = toCampaignRecord(item);
    expect(back).toEqual(r);
    for (const attribute of [
      'pk',
      'sk',
      'type',
      'gsi1pk',
      'gsi2pk',
      'gsi3pk',
      'gsi4pk',
      'listSk',
      'gsi5pk',
      'expirySk',
      'gsi6pk',
      'launchLock',
    ]) {
      expect(back).not.toHaveProperty(attribute);
    }
    expect(item).toHaveProperty('launchLock');
  });
});

describe('campaignChanges', () => {
  const ref = { organizationId: ORG, id: ID, createdVia: 'api' as const };
  const excluded = { total: 2, invalid: 1, recentlyEnriched: 0, crmExcluded: 1 };
  const results = { totalAccounts: 4, totalContactsFound: 9, pctAccountsWithContact: 0.75, pctAccountsWithMobile: 0.5 };
  const all: [string, Change][] = [
    ['lock', campaignChanges.lock('tok', new Date(CREATED_AT))],
    ['unlock', campaignChanges.unlock()],
    ['unlock with counts', campaignChanges.unlock({ eligible: 4, excluded })],
    ['launch', campaignChanges.launch(ref, attempt, excluded)],
    ['complete', campaignChanges.complete(ref, { completedAt: CREATED_AT, resultsExpireAt: EXPIRES_AT, results })],
    ['compensate', campaignChanges.compensate(ref, { status: 'canceled', startedAt: CREATED_AT, endedAt: CREATED_AT, refunded: true })],
    ['finishRecording', campaignChanges.finishRecording()],
    ['expire', campaignChanges.expire(ref)],
    ['edit', campaignChanges.edit({ name: 'n', excludeEnrichedWithinDays: null })],
  ];

  it.each(all)('%s builds a valid update: something to change, no attribute both set and removed', (_label, change) => {
    const parts = updateParts(change);
    const { set, remove } = targets(parts);
    expect(set.length + remove.length).toBeGreaterThan(0);
    expect(set.filter((a) => remove.includes(a))).toEqual([]);
    expect(new Set(set).size).toBe(set.length);
  });

  it('launch moves to enriching with the attempt and counts, and releases the lock', () => {
    const { set, remove } = targets(updateParts(campaignChanges.launch(ref, attempt, excluded)));
    expect(set).toEqual(expect.arrayContaining(['status', 'gsi2pk', 'gsi4pk', 'attempt', 'accountsEligible', 'accountsExcluded']));
    expect(remove).toEqual(expect.arrayContaining(['launchLock', 'gsi5pk', 'expirySk']));
    expect(campaignChanges.launch(ref, attempt, excluded).set).toMatchObject({
      status: 'enriching',
      attempt,
      accountsEligible: 4,
      accountsExcluded: excluded,
    });
  });

  it('complete enters the expiry index (recency waits on the organization item, not the campaign); expire leaves it and the legacy recency-pending index', () => {
    const complete = campaignChanges.complete(ref, { completedAt: CREATED_AT, resultsExpireAt: EXPIRES_AT, results });
    expect(complete.set).toMatchObject({ status: 'enriched', gsi5pk: `ORG#${ORG}#ENRICHED`, expirySk: `${EXPIRES_AT}#${ID}`, results });
    expect(complete.set).not.toHaveProperty('gsi6pk');
    // A cancel request that lost the race to completion is dropped with it.
    expect(complete.remove).toEqual(['cancelRequestedAt']);
    const expire = campaignChanges.expire(ref);
    expect(expire.set).toMatchObject({ status: 'expired' });
    expect(expire.remove).toEqual(['gsi5pk', 'expirySk', 'gsi6pk']);
  });

  it('compensate returns to draft with lastEnrichment and drops the attempt', () => {
    const change = campaignChanges.compensate(ref, { status: 'failed', startedAt: CREATED_AT, endedAt: null, refunded: true });
    expect(change.set).toMatchObject({
      status: 'draft',
      lastEnrichment: { status: 'failed', startedAt: CREATED_AT, endedAt: null, refunded: true },
    });
    expect(change.remove).toEqual(['gsi5pk', 'expirySk', 'attempt', 'cancelRequestedAt']);
  });
});

describe('campaignIs', () => {
  it('names reserved words through placeholders and keeps values under :c_', () => {
    const now = new Date(CREATED_AT);
    const clauses = [
      campaignIs.present(),
      campaignIs.apiDraft(),
      campaignIs.unlocked(now),
      campaignIs.lockedBy('t', now),
      campaignIs.runningAttempt('a'),
      campaignIs.ofAttempt('a'),
      campaignIs.due(now),
    ];
    for (const clause of clauses) {
      for (const placeholder of clause.expression.match(/[#:][A-Za-z0-9_]+/g) ?? []) {
        if (placeholder.startsWith('#')) expect(clause.names).toHaveProperty([placeholder]);
        else {
          expect(placeholder.startsWith(':c_')).toBe(true);
          expect(clause.values).toHaveProperty([placeholder]);
        }
      }
      expect(clause.expression).not.toMatch(/(^|[^#.\w])(status|token)\b/);
    }
    expect(campaignIs.due(now).values).toEqual({ ':c_enriched': 'enriched', ':c_now': CREATED_AT });
  });
});
