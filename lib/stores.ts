/**
 * The stores every function uses, built once per process from the shared
 * clients and the configured table (lazily, so the environment can be set first).
 */
import { ddb } from './aws';
import { config } from './config';
import { createOrganizationStore, type OrganizationStore } from './organizations/store';

let organizationStore: OrganizationStore | undefined;

/** The organization and API-key store of this deployment. */
export const organizations = (): OrganizationStore =>
  (organizationStore ??= createOrganizationStore({ client: ddb, tableName: config.tableName }));
