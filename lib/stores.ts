/**
 * The stores every function uses, built once per process from the shared
 * clients and the configured table and bucket (lazily, so the environment
 * can be set first).
 */
import { ddb, s3 } from './aws';
import { config } from './config';
import { createOrganizationStore, type OrganizationStore } from './organizations/store';
import { createCampaignStore, type CampaignStore } from './campaigns/store';
import { createAccountListStore, type AccountListStore } from './campaigns/account-list';

const once = <T>(build: () => T): (() => T) => {
  let value: T | undefined;
  return () => (value ??= build());
};

/** The organization and API-key store of this deployment. */
export const organizations: () => OrganizationStore = once(() => createOrganizationStore({ client: ddb, tableName: config.tableName }));

/** The campaign store of this deployment. */
export const campaigns: () => CampaignStore = once(() => createCampaignStore({ client: ddb, tableName: config.tableName }));

/** The account-list store (S3) of this deployment. */
export const accountLists: () => AccountListStore = once(() => createAccountListStore({ client: s3, bucketName: config.bucketName }));
