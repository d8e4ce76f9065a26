/**
 * An erasure job as `erasures/create` leaves it when its start is lost (the
 * process died before it ran, docs/privacy.md "The erasure job"): the person
 * suppressed, the job `pending`. Made by the product's own use-case with a
 * start that does nothing, for tests and the bench that run the job themselves.
 */
import { createErasure, erasureCreateDependencies } from '../../lib/root';

/**
 * Creates a pending erasure of one email address.
 * @returns the erasure's ID (`era_…`).
 */
export async function pendingErasure(organizationId: string, email: string, requestRef: string): Promise<string> {
  const created = await createErasure({ ...erasureCreateDependencies(), startErasure: async () => undefined }, organizationId, {
    identifiers: [{ type: 'email', value: email }],
    regime: 'gdpr',
    requestRef,
  });
  return created.id;
}
