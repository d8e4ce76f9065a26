/**
 * Live or test (docs/test-mode.md): the one owner of the choice. An
 * organization's mode is in its ID (a test twin's is `org_test_…`,
 * lib/ids.ts), so every piece of code that knows the organization knows the
 * mode without a read, the workflow's steps included. The composition root
 * (lib/root.ts) asks here which account sources an organization's
 * evaluation and workflow read; nothing else branches on the mode.
 */
import { isTestOrganizationId } from '../ids';

/** Where an organization's data belongs: its live organization, or its test twin. */
export type Mode = 'live' | 'test';

/** The mode of an organization, from its ID. */
export const modeOf = (organizationId: string): Mode => (isTestOrganizationId(organizationId) ? 'test' : 'live');

/**
 * The one of two implementations an organization uses: `test` for a test
 * twin (the built-in warehouse and history of lib/test-mode/), `live`
 * otherwise. Each is built only when chosen.
 *
 * @example
 * const warehouseFor = (organizationId: string) => forMode(organizationId, { live: warehouse, test: () => testWarehouse });
 */
export function forMode<T>(organizationId: string, choices: { live: () => T; test: () => T }): T {
  return modeOf(organizationId) === 'test' ? choices.test() : choices.live();
}
