/**
 * The privacy operations (docs/privacy.md): suppressions create, list and
 * delete; erasures create, get and list. Raw identifiers are hashed on
 * arrival (lib/warehouse/identifiers.ts) and go no further.
 */
import type { TransactItem } from '../db/conditional';
import { InvalidRequestError, NotFoundError, SuppressionLockedError } from '../errors';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { hashIdentifier, type HashedIdentifier, type RawIdentifier } from '../warehouse/identifiers';
import { erasureId, type ErasureRecord, type SuppressionRecord, type SuppressionStore } from './store';
import {
  DEFAULT_PRIVACY_PAGE_SIZE,
  type CreateErasureInput,
  type CreateSuppressionsInput,
  type ListErasuresInput,
  type ListSuppressionsInput,
} from './schema';

/** What the privacy operations need. */
export interface PrivacyDependencies {
  suppressions: SuppressionStore;
  /** Secret that signs cursors. */
  cursorSecret: string;
}

/** What erasures/create needs besides: the job's start (AWS: a queue the job's function reads; locally: in this process). */
export interface ErasureCreateDependencies extends PrivacyDependencies {
  startErasure: (organizationId: string, erasureId: string) => Promise<void>;
}

/** A suppression as the API shows it. */
export type SuppressionView = Omit<SuppressionRecord, never>;
/** An erasure as the API shows it (the organization is the caller's). */
export type ErasureView = Omit<ErasureRecord, 'organizationId'>;

const toErasureView = ({ organizationId: _organizationId, ...erasure }: ErasureRecord): ErasureView => erasure;

/**
 * Hashes a request's identifiers (the schema has checked each normalizes).
 * @throws InvalidRequestError naming `identifiers[i].value` when one does not (never quoting it).
 */
function hashAll(identifiers: readonly RawIdentifier[]): HashedIdentifier[] {
  return identifiers.map((identifier, i) => {
    const hashed = hashIdentifier(identifier);
    if (!hashed)
      throw new InvalidRequestError('The request is invalid.', [`identifiers[${i}].value: cannot be normalized as ${identifier.type}`]);
    return hashed;
  });
}

/**
 * Suppresses identifiers for the organization (idempotent per hash: an
 * existing entry is answered as it is). From the answer on, nothing matching
 * is delivered to the organization.
 * @returns one suppression per identifier, in order (the same one for identifiers that normalize alike).
 */
export async function createSuppressions(
  deps: Pick<PrivacyDependencies, 'suppressions'>,
  organizationId: string,
  input: CreateSuppressionsInput,
  now = new Date(),
  auditItem?: () => TransactItem,
): Promise<{ suppressions: SuppressionView[] }> {
  return {
    suppressions: await deps.suppressions.suppress(
      organizationId,
      hashAll(input.identifiers),
      input.reason,
      'customer',
      now,
      auditItem ? [auditItem()] : [],
    ),
  };
}

const pageBinding = (organizationId: string, what: string, filters: unknown, limit: number) => ({
  o: organizationId,
  f: JSON.stringify([what, filters ?? null]),
  l: limit,
});

/**
 * One page of the organization's suppressions (the global list is not
 * shown), by ID.
 * @throws InvalidRequestError for a cursor altered or sent with other filters or limit.
 */
export async function listSuppressions(
  deps: { suppressions: Pick<SuppressionStore, 'listSuppressions'>; cursorSecret: string },
  organizationId: string,
  input: ListSuppressionsInput,
): Promise<{ suppressions: SuppressionView[]; nextCursor: string | null }> {
  const limit = input.limit ?? DEFAULT_PRIVACY_PAGE_SIZE;
  const filters = { type: input.filters?.type, reason: input.filters?.reason };
  const binding = pageBinding(organizationId, 'suppressions', [filters.type ?? null, filters.reason ?? null], limit);
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, deps.cursorSecret, binding);
  const page = await deps.suppressions.listSuppressions(organizationId, filters, after, limit);
  const last = page.items.at(-1);
  return { suppressions: page.items, nextCursor: page.more && last ? encodeCursor({ ...binding, a: last.id }, deps.cursorSecret) : null };
}

/**
 * Deletes a customer suppression: its contacts may be delivered again.
 * @returns `{id, deleted: true}`.
 * @throws NotFoundError (resource `suppression`) when the organization has none with this ID.
 * @throws SuppressionLockedError (409) for an entry an erasure made.
 */
export async function deleteSuppression(
  deps: { suppressions: Pick<SuppressionStore, 'unsuppress'> },
  organizationId: string,
  id: string,
  auditItem?: () => TransactItem,
): Promise<{ id: string; deleted: true }> {
  const outcome = await deps.suppressions.unsuppress(organizationId, id, auditItem ? [auditItem()] : []);
  if (outcome === 'missing') throw new NotFoundError('suppression', id);
  if (outcome === 'locked') throw new SuppressionLockedError(id);
  return { id, deleted: true };
}

/**
 * Accepts an erasure (idempotent on `requestRef`: the same requestRef
 * answers the same erasure, whatever else the request says): its
 * identifiers are suppressed at once (entries an erasure made: locked), then
 * the job is started; the answer is the erasure as stored (`pending` on the
 * first call).
 */
export async function createErasure(
  deps: ErasureCreateDependencies,
  organizationId: string,
  input: CreateErasureInput,
  now = new Date(),
  auditItem?: () => TransactItem,
): Promise<ErasureView> {
  const id = erasureId(organizationId, input.requestRef);
  const existing = await deps.suppressions.getErasure(organizationId, id);
  if (existing) {
    // A job whose start was lost (the queue refused the message) is started again; a second start of a pending job is harmless.
    if (existing.status === 'pending') await deps.startErasure(organizationId, id);
    return toErasureView(existing);
  }
  const identifiers = [...new Map(hashAll(input.identifiers).map((identifier) => [identifier.hash, identifier])).values()];
  // Suppressed before the job exists: from this answer on nothing matching is delivered. The request's audit entry
  // (docs/audit.md) is written with this first change.
  await deps.suppressions.suppress(organizationId, identifiers, 'customer_request', 'erasure', now, auditItem ? [auditItem()] : []);
  const { record, created } = await deps.suppressions.createErasure({
    id,
    organizationId,
    requestRef: input.requestRef,
    regime: input.regime,
    status: 'pending',
    identifiers,
    createdAt: now.toISOString(),
    completedAt: null,
    result: null,
    receipt: null,
  });
  if (created || record.status === 'pending') await deps.startErasure(organizationId, id);
  return toErasureView(record);
}

/**
 * One erasure of the organization.
 * @throws NotFoundError (resource `erasure`).
 */
export async function getErasure(
  deps: { suppressions: Pick<SuppressionStore, 'getErasure'> },
  organizationId: string,
  id: string,
): Promise<ErasureView> {
  const erasure = await deps.suppressions.getErasure(organizationId, id);
  if (!erasure) throw new NotFoundError('erasure', id);
  return toErasureView(erasure);
}

/**
 * One page of the organization's erasures, by ID.
 * @throws InvalidRequestError for a cursor altered or sent with other filters or limit.
 */
export async function listErasures(
  deps: { suppressions: Pick<SuppressionStore, 'listErasures'>; cursorSecret: string },
  organizationId: string,
  input: ListErasuresInput,
): Promise<{ erasures: ErasureView[]; nextCursor: string | null }> {
  const limit = input.limit ?? DEFAULT_PRIVACY_PAGE_SIZE;
  const status = input.filters?.status;
  const binding = pageBinding(organizationId, 'erasures', status ?? null, limit);
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, deps.cursorSecret, binding);
  const page = await deps.suppressions.listErasures(organizationId, status, after, limit);
  const last = page.items.at(-1);
  return {
    erasures: page.items.map(toErasureView),
    nextCursor: page.more && last ? encodeCursor({ ...binding, a: last.id }, deps.cursorSecret) : null,
  };
}
