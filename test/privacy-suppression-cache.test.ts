/**
 * The suppression policies a process keeps (lib/privacy/deliverable.ts
 * `cachedSuppressionPolicies`, docs/privacy.md "Suppressions"), against
 * DynamoDB Local on a table of its own (its own global list): a read unpacks
 * the compact sets only when a version changed, and a suppression or its
 * removal takes effect on the very next read, never served from a stale set.
 * Counted calls, no timing.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ddb, dynamodb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { ensureTable } from '../infra/local/table';
import { createSuppressionStore, GLOBAL_SCOPE, type SuppressionStore } from '../lib/privacy/store';
import { cachedSuppressionPolicies } from '../lib/privacy/deliverable';
import { contactDigests, contactHashes } from '../lib/warehouse/identifiers';
import { blankContact } from '../lib/warehouse/schema';
import type { DeliveryPolicy } from '../lib/results/deliverable';

const tableName = `${config.tableName}-supcache-${randomUUID()}`;
const store = createSuppressionStore({ client: ddb, tableName });

beforeAll(async () => {
  await ensureTable(dynamodb, tableName);
});
afterAll(async () => {
  await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
});

/** The store with its set reads counted. */
function counted(inner: SuppressionStore) {
  const calls = { sets: 0, versions: 0 };
  return {
    calls,
    store: {
      versionedHashSet: (organizationId: string) => {
        calls.sets++;
        return inner.versionedHashSet(organizationId);
      },
      setVersions: (organizationId: string) => {
        calls.versions++;
        return inner.setVersions(organizationId);
      },
    },
  };
}

const person = (email: string) => ({ ...blankContact(`ct_${randomUUID()}`), email });
/** Whether the policy withholds a contact, by its digests as a part stores them. */
const withholds = (policy: DeliveryPolicy, contact: ReturnType<typeof person>) => {
  const digests = Buffer.concat(contactDigests(contact));
  return policy.withholds?.(digests, 0, digests.length) ?? false;
};
const emailEntry = (contact: ReturnType<typeof person>) => ({ type: 'email' as const, hash: contactHashes(contact)[1]! });

describe('suppression policies kept by the sets’ versions', () => {
  it('reads only the versions while nothing changed, and unpacks the sets again on the read after any change', async () => {
    const organizationId = `org_${randomUUID()}`;
    const { calls, store: countedStore } = counted(store);
    const policies = cachedSuppressionPolicies(countedStore);
    const ann = person(`ann.${randomUUID()}@example.com`);
    const bob = person(`bob.${randomUUID()}@example.com`);
    await store.suppress(organizationId, [emailEntry(ann)], 'opt_out', 'customer', new Date());

    expect(withholds(await policies(organizationId), ann)).toBe(true);
    expect(calls).toEqual({ sets: 1, versions: 0 });
    for (let i = 0; i < 5; i++) expect(withholds(await policies(organizationId), ann)).toBe(true);
    // Five reads of the versions only: the sets were not read or unpacked again.
    expect(calls).toEqual({ sets: 1, versions: 5 });

    // A suppression acknowledged: the next read has it.
    const [bobEntry] = await store.suppress(organizationId, [emailEntry(bob)], 'opt_out', 'customer', new Date());
    expect(withholds(await policies(organizationId), bob)).toBe(true);
    expect(calls).toEqual({ sets: 2, versions: 6 });

    // Its removal: the next read delivers the contact again.
    expect(await store.unsuppress(organizationId, bobEntry!.id)).toBe('removed');
    const after = await policies(organizationId);
    expect(withholds(after, bob)).toBe(false);
    expect(withholds(after, ann)).toBe(true);
    expect(calls).toEqual({ sets: 3, versions: 7 });

    // A change of the global list is a change too.
    const cy = person(`cy.${randomUUID()}@example.com`);
    await store.suppress(GLOBAL_SCOPE, [emailEntry(cy)], 'opt_out', 'customer', new Date());
    expect(withholds(await policies(organizationId), cy)).toBe(true);
    expect(calls).toEqual({ sets: 4, versions: 8 });
  });

  it('never keeps the policy of a set written before versions: every read unpacks it', async () => {
    const organizationId = `org_${randomUUID()}`;
    const dan = person(`dan.${randomUUID()}@example.com`);
    await store.suppress(organizationId, [emailEntry(dan)], 'opt_out', 'customer', new Date());
    // The set as a release before versions left it.
    await ddb.send(
      new UpdateCommand({ TableName: tableName, Key: keys.suppressionSet(organizationId), UpdateExpression: 'REMOVE version' }),
    );
    const { calls, store: countedStore } = counted(store);
    const policies = cachedSuppressionPolicies(countedStore);
    for (let i = 0; i < 3; i++) expect(withholds(await policies(organizationId), dan)).toBe(true);
    expect(calls.sets).toBe(3);
  });

  it('keeps at most `size` organizations, least recently used dropped first', async () => {
    const { calls, store: countedStore } = counted(store);
    const policies = cachedSuppressionPolicies(countedStore, 2);
    const [a, b, c] = [0, 1, 2].map(() => `org_${randomUUID()}`) as [string, string, string];
    await policies(a);
    await policies(b);
    await policies(a); // kept: versions only
    await policies(c); // drops b, the least recently used
    await policies(a); // still kept
    await policies(b); // unpacked again
    expect(calls).toEqual({ sets: 4, versions: 2 });
  });
});
