/**
 * The stores and ports every function uses, built once per process from the
 * shared clients and the configured table, bucket and state machine (lazily,
 * so the environment can be set first).
 */
import { ddb, s3, sfn } from './aws';
import { config } from './config';
import { createOrganizationStore, type OrganizationStore } from './organizations/store';
import { createAccountHistoryStore, type AccountHistoryStore } from './organizations/account-history';
import { createCampaignStore, type CampaignStore } from './campaigns/store';
import { createAccountListStore, type AccountListStore } from './campaigns/account-list';
import { createEmbeddedWarehouse, type EmbeddedWarehouse, type Warehouse } from './warehouse/warehouse';
import { createEnrichmentStore, type EnrichmentStore } from './enrichment/store';
import { createResultStore, type ResultStore } from './enrichment/results';
import { createStepFunctionsWorkflow, type WorkflowPort } from './enrichment/workflow';
import { createIdempotencyStore, type IdempotencyStore } from './idempotency/store';

const once = <T>(build: () => T): (() => T) => {
  let value: T | undefined;
  return () => (value ??= build());
};

/** The organization and API-key store of this deployment. */
export const organizations: () => OrganizationStore = /* @__PURE__ */ once(() => createOrganizationStore({ client: ddb, tableName: config.tableName }));

/** Account enrichment times and CRM targets. */
export const accountHistory: () => AccountHistoryStore = /* @__PURE__ */ once(() => createAccountHistoryStore({ client: ddb, tableName: config.tableName }));

/** The campaign store of this deployment. */
export const campaigns: () => CampaignStore = /* @__PURE__ */ once(() => createCampaignStore({ client: ddb, tableName: config.tableName }));

/** The account-list store (S3) of this deployment. */
export const accountLists: () => AccountListStore = /* @__PURE__ */ once(() => createAccountListStore({ client: s3, bucketName: config.bucketName }));

/** The enrichment lifecycle store. */
export const enrichment: () => EnrichmentStore = /* @__PURE__ */ once(() => createEnrichmentStore({ client: ddb, tableName: config.tableName }));

/** Enrichment result parts (S3). */
export const results: () => ResultStore = /* @__PURE__ */ once(() => createResultStore({ client: s3, bucketName: config.bucketName }));

/** The enrichment workflow (Step Functions). */
export const workflow: () => WorkflowPort = /* @__PURE__ */ once(() => createStepFunctionsWorkflow({ client: sfn(), stateMachineArn: config.stateMachineArn }));

/** Idempotency records (decisions §10). */
export const idempotencyRecords: () => IdempotencyStore = /* @__PURE__ */ once(() => createIdempotencyStore({ client: ddb, tableName: config.tableName }));

/** The embedded warehouse (decisions §7): imports and the default adapter. */
export const embeddedWarehouse: () => EmbeddedWarehouse = /* @__PURE__ */ once(() => createEmbeddedWarehouse({ client: ddb, tableName: config.tableName }));

let warehouseAdapter: Warehouse | undefined;
/** The warehouse adapter in use: the embedded one unless {@link useWarehouse} chose another. */
export const warehouse = (): Warehouse => warehouseAdapter ?? embeddedWarehouse();
/** Chooses the warehouse adapter of this process (another data platform, or a failing one in fault tests); `undefined` restores the embedded one. */
export const useWarehouse = (adapter: Warehouse | undefined): void => {
  warehouseAdapter = adapter;
};
