/**
 * Suppressions and erasures in the table (docs/data-model.md "Privacy"):
 * one partition per scope (`PRIVACY#<organizationId>`, or `PRIVACY#GLOBAL`
 * for the operator's list) holding
 * - one item per suppressed hash (`SUP#<id>`, the ID derived from scope and
 *   hash, so a hash is suppressed once per scope);
 * - the compact set (`SUPSET`): the first 8 bytes of every suppressed hash of
 *   the scope in one binary set, which a delivery path reads once (an
 *   organization's and the global one: two small reads per batch or page),
 *   and its `version`, a random token replaced by every change of the set
 *   in the same write, so a reader that holds the set of a version can skip
 *   reading it again (lib/privacy/deliverable.ts);
 * - one item per erasure (`ERA#<id>`, the ID derived from the organization
 *   and `requestRef`).
 * Nothing here holds a raw identifier: hashes only.
 */
import { BatchGetCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { StoreMethod, TableAccess } from '../db/methods';
import { UNFINISHED_ERASURES_INDEX } from '../db/table';
import * as keys from '../db/keys';
import { putIf, transactWrite, updateIf, type TransactItem } from '../db/conditional';
import { randomBytes } from 'node:crypto';
import { derivedId } from '../ids';
import type { HashedIdentifier, IdentifierType } from '../warehouse/identifiers';

/** The scope of the operator's global suppression list. */
export const GLOBAL_SCOPE = 'GLOBAL';

/** Why an entry exists. */
export const SUPPRESSION_REASONS = ['opt_out', 'customer_request', 'other'] as const;
/** A suppression reason. */
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
/** Who made an entry: the customer (deletable) or an erasure (locked). */
export type SuppressionOrigin = 'customer' | 'erasure';

/** A suppression as stored. */
export interface SuppressionRecord {
  /** `sup_` + 21 base58, derived from (scope, hash). */
  id: string;
  type: IdentifierType;
  hash: string;
  reason: SuppressionReason;
  origin: SuppressionOrigin;
  createdAt: string;
}

/** Erasure job statuses, in order. */
export const ERASURE_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
/** An erasure job status. */
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];
/** Legal regimes an erasure is requested under. */
export const ERASURE_REGIMES = ['gdpr', 'ccpa', 'other'] as const;
/** A legal regime. */
export type ErasureRegime = (typeof ERASURE_REGIMES)[number];

/** What a completed erasure removed. */
export interface ErasureResult {
  contactsRemoved: number;
  resultObjectsRewritten: number;
  exportsDeleted: number;
  campaignIds: string[];
}

/**
 * How far a running erasure job got (kept on its item, never answered): the
 * campaigns up to `after` (in ID order) are done and their counts are in the
 * totals, so a rerun after a crash or a redelivery resumes after `after`.
 */
export interface ErasureProgress extends ErasureResult {
  /** The last campaign ID done, in ID order. */
  after: string;
}

/** An erasure job as stored and answered. */
export interface ErasureRecord {
  /** `era_` + 21 base58, derived from (organization, requestRef). */
  id: string;
  organizationId: string;
  requestRef: string;
  regime: ErasureRegime;
  status: ErasureStatus;
  identifiers: HashedIdentifier[];
  createdAt: string;
  completedAt: string | null;
  result: ErasureResult | null;
  /** Compact JWS over the completed job (lib/privacy/receipt.ts). */
  receipt: string | null;
}

/** Bytes of a hash kept in the compact set: 2^64 values, so a false match among n entries has odds n / 1.8e19. */
export const SET_PREFIX_BYTES = 8;
/** The set entry of a hash: its first {@link SET_PREFIX_BYTES} bytes. */
export const setEntry = (hash: string): Uint8Array => Buffer.from(hash.slice(0, SET_PREFIX_BYTES * 2), 'hex');
/** The set entry of a hash as a string key (hex), the form {@link SuppressionStore.hashSet} answers. */
export const setKey = (hash: string): string => hash.slice(0, SET_PREFIX_BYTES * 2);

/** A fresh version token of a compact set: replaced by every write that changes the set. */
const newSetVersion = () => randomBytes(12).toString('base64url');

/**
 * The versions of an organization's compact set and the global one
 * (`none`: no set yet; `unversioned`: a set written before versions, which
 * cannot be told from another and so is never taken from a cache).
 */
export interface SetVersions {
  organization: string;
  global: string;
}

/** The version of a compact set item as read: its token, `none` without an item, `unversioned` for an item written before tokens. */
const versionOf = (item: Record<string, unknown> | undefined) =>
  item === undefined ? 'none' : typeof item.version === 'string' ? item.version : 'unversioned';

/** Whether {@link SetVersions} name the sets unambiguously (no set written before version tokens). */
export const cacheableVersions = (versions: SetVersions) => versions.organization !== 'unversioned' && versions.global !== 'unversioned';

/** Storage of suppressions and erasures. */
export interface SuppressionStore {
  /**
   * Suppresses hashes in a scope, idempotently per hash: an existing entry is
   * answered as it is, except that `origin: "erasure"` locks an existing
   * customer entry. The compact set is updated first, and checked again after
   * the entries are written (a delete of the same hash may have run between),
   * so an entry is never answered before it takes effect.
   * @param alsoPut - items written in one transaction with the set's update (the request's audit entry, docs/audit.md).
   * @returns one record per given entry, in order.
   */
  suppress(
    scope: string,
    entries: readonly { type: IdentifierType; hash: string }[],
    reason: SuppressionReason,
    origin: SuppressionOrigin,
    now: Date,
    alsoPut?: readonly TransactItem[],
  ): Promise<SuppressionRecord[]>;
  /** One page of a scope's entries by ID order, after `after` (an ID). */
  listSuppressions(
    scope: string,
    filters: { type?: IdentifierType; reason?: SuppressionReason },
    after: string | undefined,
    limit: number,
  ): Promise<{ items: SuppressionRecord[]; more: boolean }>;
  /**
   * Removes a customer entry and its set entry in one TransactWriteItems (the entry's condition `origin = customer`
   * fails for an erasure's entry and for a missing one), so the set holds every hash that has an entry
   * (docs/data-model.md "Privacy").
   * @param alsoPut - items written in one transaction with the entry's removal (the request's audit entry, docs/audit.md).
   * @returns `removed`, `missing`, or `locked` (an erasure's entry, kept).
   */
  unsuppress(scope: string, id: string, alsoPut?: readonly TransactItem[]): Promise<'removed' | 'missing' | 'locked'>;
  /** The set entries ({@link setKey}) of the organization's and the global list, and their versions: one BatchGetItem of two items. */
  hashSet(organizationId: string): Promise<Set<string>>;
  /**
   * The same, with the versions read with them (strongly consistent).
   */
  versionedHashSet(organizationId: string): Promise<{ entries: Set<string>; versions: SetVersions }>;
  /**
   * Only the versions of the two sets (strongly consistent; the same read units as the sets, a few bytes on the wire,
   * nothing to decode): one BatchGetItem.
   */
  setVersions(organizationId: string): Promise<SetVersions>;
  /** Records an erasure unless one exists with its ID. @returns the stored record and whether this call created it. */
  createErasure(record: ErasureRecord): Promise<{ record: ErasureRecord; created: boolean }>;
  /** One erasure (strongly consistent). */
  getErasure(organizationId: string, id: string): Promise<ErasureRecord | undefined>;
  /** One page of an organization's erasures by ID order, after `after`. */
  listErasures(
    organizationId: string,
    status: ErasureStatus | undefined,
    after: string | undefined,
    limit: number,
  ): Promise<{ items: ErasureRecord[]; more: boolean }>;
  /** The progress a running job saved, if any (strongly consistent). */
  erasureProgress(organizationId: string, id: string): Promise<ErasureProgress | undefined>;
  /**
   * Makes `runner` the one run of a job (docs/privacy.md "The erasure job"): a `pending` job, or a `running` one whose
   * run's lease has lapsed (its run died) or, with `takeOver`, any `running` one (the local stack at start: the folder's
   * previous process is gone), moves to `running` held by `runner` until `now` + {@link ERASURE_LEASE_SECONDS}.
   * @returns false when another run holds it or it has ended: this run must not touch it.
   */
  claimErasure(organizationId: string, id: string, runner: string, now: Date, options?: { takeOver?: boolean }): Promise<boolean>;
  /**
   * Saves the progress of the run that holds the job, and renews its lease.
   * @returns false when the job is not `running` any more or another run holds it.
   */
  saveErasureProgress(organizationId: string, id: string, progress: ErasureProgress, runner: string, now: Date): Promise<boolean>;
  /** Up to `limit` jobs still `pending` or `running`, oldest first (one Query of the sparse index). */
  unfinishedErasures(limit: number): Promise<{ organizationId: string; id: string }[]>;
  /**
   * Moves an erasure from `from` to `to` with the given fields; a job that
   * ends (`completed`, `failed`) leaves the unfinished index and drops its progress.
   * @returns false when it is not in `from`.
   */
  moveErasure(
    organizationId: string,
    id: string,
    from: ErasureStatus,
    to: ErasureStatus,
    fields?: Partial<Pick<ErasureRecord, 'completedAt' | 'result' | 'receipt'>>,
    runner?: string,
  ): Promise<boolean>;
}

/**
 * Seconds a run holds an erasure job after its claim or its last saved progress: longer than the AWS worker's
 * timeout (infra/stack.ts derives it from this), so a lapsed lease means its run is gone, and shorter than the
 * queue's visibility timeout, so a redelivered message finds it lapsed.
 */
export const ERASURE_LEASE_SECONDS = 20 * 60;

/** The ID of a scope's suppression of `hash`. */
export const suppressionId = (scope: string, hash: string): string => derivedId('sup', scope, hash);
/** The ID of an organization's erasure of `requestRef`. */
export const erasureId = (organizationId: string, requestRef: string): string => derivedId('era', organizationId, requestRef);

const toSuppression = (item: Record<string, unknown>): SuppressionRecord => ({
  id: String(item.id),
  type: item.identifierType as IdentifierType,
  hash: String(item.hash),
  reason: item.reason as SuppressionReason,
  origin: item.origin as SuppressionOrigin,
  createdAt: String(item.createdAt),
});

const ERASURE_FIELDS = [
  'id',
  'organizationId',
  'requestRef',
  'regime',
  'status',
  'identifiers',
  'createdAt',
  'completedAt',
  'result',
  'receipt',
] as const;
const toErasure = (item: Record<string, unknown>): ErasureRecord =>
  Object.fromEntries(ERASURE_FIELDS.map((field) => [field, item[field] ?? null])) as unknown as ErasureRecord;

/** A store method's factory (lib/db/methods.ts): an operation's bundle carries only the methods it names. */
type Method<K extends keyof SuppressionStore> = StoreMethod<SuppressionStore, K>;

/**
 * {@link SuppressionStore.getErasure} on its own (the store's own method is this one): what `privacy/erasures/get`
 * reads, so its function's bundle carries no other method of the store (docs/deploy.md, bench `bundles`).
 */
export const getErasure: Method<'getErasure'> =
  ({ client, tableName }) =>
  async (organizationId, id) => {
    const item = (await client.send(new GetCommand({ TableName: tableName, Key: keys.erasure(organizationId, id), ConsistentRead: true })))
      .Item;
    return item ? toErasure(item) : undefined;
  };

/** The compact set items of an organization and of the global list, by `pk` (strongly consistent): one BatchGetItem. */
/** Adds the entries of a set item's `hashes` (8-byte prefixes, {@link setEntry}) to `into` as hex ({@link setKey}). */
const addSetEntries = (item: Record<string, unknown> | undefined, into: Set<string>): Set<string> => {
  for (const entry of (item?.hashes as Set<Uint8Array> | undefined) ?? []) into.add(Buffer.from(entry).toString('hex'));
  return into;
};

const setItems = async ({ client, tableName }: TableAccess, organizationId: string, withHashes: boolean) => {
  const projection = {
    ProjectionExpression: withHashes ? '#pk, #version, #hashes' : '#pk, #version',
    ExpressionAttributeNames: { '#pk': 'pk', '#version': 'version', ...(withHashes ? { '#hashes': 'hashes' } : {}) },
  };
  const answer = await client.send(
    new BatchGetCommand({
      RequestItems: {
        [tableName]: {
          Keys: [keys.suppressionSet(organizationId), keys.suppressionSet(GLOBAL_SCOPE)],
          ...projection,
          ConsistentRead: true,
        },
      },
    }),
  );
  const items = new Map<string, Record<string, unknown>>();
  for (const item of answer.Responses?.[tableName] ?? []) items.set(String(item.pk), item);
  // Unprocessed keys (throttling): read them one by one rather than deliver without them.
  for (const key of answer.UnprocessedKeys?.[tableName]?.Keys ?? []) {
    const item = (await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true, ...projection }))).Item;
    if (item) items.set(String(item.pk), item);
  }
  return items;
};

const versionsOf = (organizationId: string, items: Map<string, Record<string, unknown>>): SetVersions => ({
  organization: versionOf(items.get(keys.suppressionSet(organizationId).pk)),
  global: versionOf(items.get(keys.suppressionSet(GLOBAL_SCOPE).pk)),
});

/**
 * {@link SuppressionStore.versionedHashSet} on its own (the store's own method is this one), with
 * {@link setVersions}: what every delivery path reads (lib/privacy/deliverable.ts), so the functions that
 * deliver results carry no method of the store that writes (docs/deploy.md, bench `bundles`).
 */
export const versionedHashSet: Method<'versionedHashSet'> = (table) => async (organizationId) => {
  const items = await setItems(table, organizationId, true);
  const set = new Set<string>();
  for (const item of items.values()) addSetEntries(item, set);
  return { entries: set, versions: versionsOf(organizationId, items) };
};

/** {@link SuppressionStore.hashSet} on its own: {@link versionedHashSet} without the versions. */
export const hashSet: Method<'hashSet'> = (table) => {
  const read = versionedHashSet(table);
  return async (organizationId) => (await read(organizationId)).entries;
};

/** {@link SuppressionStore.setVersions} on its own (see {@link versionedHashSet}). */
export const setVersions: Method<'setVersions'> = (table) => async (organizationId) =>
  versionsOf(organizationId, await setItems(table, organizationId, false));

/** One page of a privacy partition's items under `prefix` after `after` (and whether more follow), filtered as given. */
const pageOf =
  ({ client, tableName }: TableAccess) =>
  async (
    scope: string,
    prefix: string,
    after: string | undefined,
    limit: number,
    filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> },
  ) => {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined = after === undefined ? undefined : { pk: keys.privacy(scope), sk: `${prefix}${after}` };
    // A filtered query may answer short pages: read on until the page (and one more, to know) is full.
    do {
      const answer = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': keys.privacy(scope), ':prefix': prefix, ...filter?.values },
          ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeNames: filter.names } : {}),
          ConsistentRead: true,
          Limit: limit + 1,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(answer.Items ?? []));
      start = answer.LastEvaluatedKey;
    } while (start && items.length <= limit);
    return { items: items.slice(0, limit), more: items.length > limit };
  };

/** {@link SuppressionStore.listSuppressions}. */
export const listSuppressions: Method<'listSuppressions'> = (table) => async (scope, filters, after, limit) => {
  const clauses: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (filters.type) {
    clauses.push('#identifierType = :identifierType');
    names['#identifierType'] = 'identifierType';
    values[':identifierType'] = filters.type;
  }
  if (filters.reason) {
    clauses.push('#reason = :reason');
    names['#reason'] = 'reason';
    values[':reason'] = filters.reason;
  }
  const { items, more } = await pageOf(table)(
    scope,
    keys.privacyPrefixes.suppression,
    after,
    limit,
    clauses.length ? { expression: clauses.join(' AND '), names, values } : undefined,
  );
  return { items: items.map(toSuppression), more };
};

/** {@link SuppressionStore.unsuppress}. */
export const unsuppress: Method<'unsuppress'> =
  ({ client, tableName }) =>
  async (scope, id, alsoPut = []) => {
    const existing = (await client.send(new GetCommand({ TableName: tableName, Key: keys.suppression(scope, id), ConsistentRead: true })))
      .Item;
    if (!existing) return 'missing';
    if (existing.origin === 'erasure') return 'locked';
    // The entry and its set entry leave together (docs/data-model.md "Privacy", the set's invariant): a suppression
    // of the same hash (an erasure's lock included) is ordered wholly before or after this, never between.
    const removed = await transactWrite(client, {
      TransactItems: [
        {
          Delete: {
            TableName: tableName,
            Key: keys.suppression(scope, id),
            ConditionExpression: 'origin = :customer',
            ExpressionAttributeValues: { ':customer': 'customer' },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          Update: {
            TableName: tableName,
            Key: keys.suppressionSet(scope),
            UpdateExpression: 'DELETE #set :entries SET #version = :version',
            ExpressionAttributeNames: { '#set': 'hashes', '#version': 'version' },
            ExpressionAttributeValues: { ':entries': new Set([setEntry(String(existing.hash))]), ':version': newSetVersion() },
          },
        },
        ...alsoPut,
      ],
    });
    if (!removed.ok) {
      if (!removed.failed.includes(0))
        throw new Error("An item written with the suppression's removal already existed; nothing was written");
      return removed.old[0] ? 'locked' : 'missing';
    }
    return 'removed';
  };

/** {@link SuppressionStore.listErasures}. */
export const listErasures: Method<'listErasures'> = (table) => async (organizationId, status, after, limit) => {
  const { items, more } = await pageOf(table)(
    organizationId,
    keys.privacyPrefixes.erasure,
    after,
    limit,
    status ? { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': status } } : undefined,
  );
  return { items: items.map(toErasure), more };
};

/** Set entries a repair transaction adds with its entries' checks: TransactWriteItems holds 100 items, one is the set's. */
const REPAIR_CHUNK = 99;

/**
 * The second half of {@link SuppressionStore.suppress}, after its entries are written: makes sure the set holds each
 * of `hashes` whose entry still exists. One strongly consistent GetItem of the scope's set; nothing more unless a
 * {@link SuppressionStore.unsuppress} of the same hash ran between the set's `ADD` and the entry's write (it removed
 * the old entry and the hash; the entry written after it would be listed but not in force). Such a hash is added
 * back in a TransactWriteItems that checks its entry still exists, so a delete that comes later still reopens it.
 *
 * Why the set then holds every hash that has an entry (docs/data-model.md "Privacy"): a hash leaves the set only
 * in the transaction that deletes its entry (unsuppress), and an entry is written only by suppress, which answers
 * after this check. For a suppress S and an unsuppress U of one hash, U before S's `ADD`: S adds and writes;
 * U between the `ADD` and the entry write: this check finds the hash missing and adds it back with the entry
 * checked; U after the entry write: it removes the entry and the hash together (or, for an entry an erasure locked,
 * nothing: 409). Two suppresses each run this for their own hashes.
 */
const keepInSet = async ({ client, tableName }: TableAccess, scope: string, hashes: readonly string[]) => {
  const item = (
    await client.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.suppressionSet(scope),
        ConsistentRead: true,
        ProjectionExpression: '#hashes',
        ExpressionAttributeNames: { '#hashes': 'hashes' },
      }),
    )
  ).Item;
  const inSet = addSetEntries(item, new Set());
  let missing = hashes.filter((hash) => !inSet.has(setKey(hash)));
  while (missing.length > 0) {
    const chunk = missing.slice(0, REPAIR_CHUNK);
    const outcome = await transactWrite(client, {
      TransactItems: [
        {
          Update: {
            TableName: tableName,
            Key: keys.suppressionSet(scope),
            UpdateExpression: 'ADD #set :entries SET #type = :type, #version = :version',
            ExpressionAttributeNames: { '#set': 'hashes', '#type': 'type', '#version': 'version' },
            ExpressionAttributeValues: {
              ':entries': new Set(chunk.map(setEntry)),
              ':type': 'suppressionSet',
              ':version': newSetVersion(),
            },
          },
        },
        ...chunk.map((hash) => ({
          ConditionCheck: {
            TableName: tableName,
            Key: keys.suppression(scope, suppressionId(scope, hash)),
            ConditionExpression: 'attribute_exists(pk)',
          },
        })),
      ],
    });
    // An entry deleted since (its hash rightly out of the set) is dropped; the rest of the chunk is tried again.
    const gone = outcome.ok ? new Set(chunk) : new Set(outcome.failed.map((index) => chunk[index - 1]));
    missing = missing.filter((hash) => !gone.has(hash));
  }
};

/** Builds the DynamoDB implementation of {@link SuppressionStore}. */
export function createSuppressionStore(table: TableAccess): SuppressionStore {
  const { client, tableName } = table;
  return {
    async suppress(scope, entries, reason, origin, now, alsoPut = []) {
      if (entries.length === 0) return [];
      const unique = [...new Map(entries.map((entry) => [entry.hash, entry])).values()];
      // The set first: from here on nothing matching is delivered, whatever happens to the items.
      const setUpdate = {
        TableName: tableName,
        Key: keys.suppressionSet(scope),
        UpdateExpression: 'ADD #set :entries SET #type = :type, #version = :version',
        ExpressionAttributeNames: { '#set': 'hashes', '#type': 'type', '#version': 'version' },
        ExpressionAttributeValues: {
          ':entries': new Set(unique.map((entry) => setEntry(entry.hash))),
          ':type': 'suppressionSet',
          ':version': newSetVersion(),
        },
      };
      if (alsoPut.length > 0) {
        if (!(await transactWrite(client, { TransactItems: [{ Update: setUpdate }, ...alsoPut] })).ok)
          throw new Error('An item written with the suppression set already existed; nothing was written');
      } else await client.send(new UpdateCommand(setUpdate));
      const createdAt = now.toISOString();
      const stored = await Promise.all(
        unique.map(async (entry): Promise<SuppressionRecord> => {
          const id = suppressionId(scope, entry.hash);
          const record: SuppressionRecord = { id, type: entry.type, hash: entry.hash, reason, origin, createdAt };
          const put = await putIf(client, {
            TableName: tableName,
            Item: {
              ...keys.suppression(scope, id),
              type: 'suppression',
              id,
              identifierType: entry.type,
              hash: entry.hash,
              reason,
              origin,
              createdAt,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          });
          if (put.ok) return record;
          const existing = toSuppression(put.old ?? {});
          if (origin !== 'erasure' || existing.origin === 'erasure') return existing;
          // An erasure locks the customer's entry of the same hash.
          const locked = await updateIf(client, {
            TableName: tableName,
            Key: keys.suppression(scope, id),
            UpdateExpression: 'SET origin = :erasure',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':erasure': 'erasure' },
            ReturnValues: 'ALL_NEW',
          });
          return locked.ok ? toSuppression(locked.item) : { ...existing, origin: 'erasure' };
        }),
      );
      await keepInSet(
        table,
        scope,
        unique.map((entry) => entry.hash),
      );
      const byHash = new Map(stored.map((record) => [record.hash, record]));
      return entries.map((entry) => byHash.get(entry.hash)!);
    },

    listSuppressions: listSuppressions(table),

    unsuppress: unsuppress(table),

    hashSet: hashSet(table),

    versionedHashSet: versionedHashSet(table),

    setVersions: setVersions(table),

    async createErasure(record) {
      const put = await putIf(client, {
        TableName: tableName,
        Item: {
          ...keys.erasure(record.organizationId, record.id),
          ...keys.erasureUnfinished(record.createdAt, record.id),
          type: 'erasure',
          ...record,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      return put.ok ? { record, created: true } : { record: toErasure(put.old ?? {}), created: false };
    },

    getErasure: getErasure(table),

    listErasures: listErasures(table),

    async erasureProgress(organizationId, id) {
      const item = (
        await client.send(
          new GetCommand({
            TableName: tableName,
            Key: keys.erasure(organizationId, id),
            ProjectionExpression: 'progress',
            ConsistentRead: true,
          }),
        )
      ).Item;
      return item?.progress as ErasureProgress | undefined;
    },

    async claimErasure(organizationId, id, runner, now, options = {}) {
      const lapsed = options.takeOver ? '' : ' AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now OR runner = :runner)';
      const claimed = await updateIf(client, {
        TableName: tableName,
        Key: keys.erasure(organizationId, id),
        UpdateExpression: 'SET #status = :running, runner = :runner, leaseUntil = :until',
        ConditionExpression: `#status = :pending OR (#status = :running${lapsed})`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':running': 'running',
          ':runner': runner,
          ':until': now.getTime() + ERASURE_LEASE_SECONDS * 1000,
          ...(options.takeOver ? {} : { ':now': now.getTime() }),
        },
      });
      return claimed.ok;
    },

    async saveErasureProgress(organizationId, id, progress, runner, now) {
      const saved = await updateIf(client, {
        TableName: tableName,
        Key: keys.erasure(organizationId, id),
        UpdateExpression: 'SET progress = :progress, leaseUntil = :until',
        ConditionExpression: '#status = :running AND runner = :runner',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':progress': progress,
          ':running': 'running',
          ':runner': runner,
          ':until': now.getTime() + ERASURE_LEASE_SECONDS * 1000,
        },
      });
      return saved.ok;
    },

    async unfinishedErasures(limit) {
      const answer = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: UNFINISHED_ERASURES_INDEX.indexName,
          KeyConditionExpression: 'gsi6pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.erasureUnfinished('', '').gsi6pk },
          Limit: limit,
        }),
      );
      const scope = keys.privacy('');
      return (answer.Items ?? []).map((item) => ({
        organizationId: String(item.pk).slice(scope.length),
        id: String(item.sk).slice(keys.privacyPrefixes.erasure.length),
      }));
    },

    async moveErasure(organizationId, id, from, to, fields = {}, runner) {
      const names: Record<string, string> = { '#status': 'status' };
      const values: Record<string, unknown> = { ':from': from, ':to': to, ...(runner === undefined ? {} : { ':runner': runner }) };
      const sets = ['#status = :to'];
      for (const [field, value] of Object.entries(fields)) {
        names[`#${field}`] = field;
        values[`:${field}`] = value;
        sets.push(`#${field} = :${field}`);
      }
      const ends = to === 'completed' || to === 'failed';
      const moved = await updateIf(client, {
        TableName: tableName,
        Key: keys.erasure(organizationId, id),
        UpdateExpression: `SET ${sets.join(', ')}${ends ? ' REMOVE gsi6pk, listSk, progress, runner, leaseUntil' : ''}`,
        ConditionExpression: runner === undefined ? '#status = :from' : '#status = :from AND runner = :runner',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      });
      return moved.ok;
    },
  };
}
