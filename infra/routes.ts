/**
 * The API's routes: one Lambda per operation (docs/README.md). The CDK
 * stack, the local HTTP server and the OpenAPI document are built from this
 * list, so a route exists everywhere or nowhere.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Operation } from '../lib/http/operation';
import { RENDERER_MODULE } from '../lib/http/docs';
import {
  createKeyOperation,
  describeLimitsOperation,
  describeOrganizationOperation,
  listKeysOperation,
  orgUsageOperation,
  revokeKeyOperation,
  rotateKeyOperation,
} from '../lib/organizations/schema';
import { campaignResultsOperation, streamCampaignResultsOperation, exportCampaignOperation } from '../lib/exports/schema';
import { listLedgerOperation } from '../lib/credits/schema';
import { listAuditOperation } from '../lib/audit/schema';
import {
  createWebhookEndpointOperation,
  deleteWebhookEndpointOperation,
  listWebhookDeliveriesOperation,
  listEventsOperation,
  listWebhookEndpointsOperation,
  redeliverWebhookOperation,
  rotateWebhookSecretOperation,
  testWebhookEndpointOperation,
} from '../lib/webhooks/schema';
import {
  createCampaignOperation,
  enrichCampaignOperation,
  getCampaignOperation,
  listCampaignsOperation,
  updateCampaignOperation,
} from '../lib/campaigns/schema';
import { cancelCampaignOperation, campaignAccountsOperation, quoteCampaignOperation } from '../lib/enrichment/schema';
import { createUploadOperation } from '../lib/uploads/schema';
import {
  createErasureOperation,
  createSuppressionsOperation,
  deleteSuppressionOperation,
  getErasureOperation,
  listErasuresOperation,
  listSuppressionsOperation,
} from '../lib/privacy/schema';
import { API_CATALOG_PATH, LLMS_TXT_PATH, MCP_PATH, SERVER_CARD_PATH, isMcpTool } from '../lib/contract/mcp';

/** What a function may do with the stack's resources (least privilege, one grant each). */
export interface RoutePermissions {
  /** Table access: read only, or read and write. */
  table: 'read' | 'readWrite';
  /** Bucket access, when the operation touches stored objects. */
  bucket?: 'read' | 'write' | 'readWrite';
  /** Object key patterns the bucket access is limited to (IAM wildcards); every object of the bucket when absent. */
  bucketKeys?: readonly string[];
  /** Whether the function deletes objects (storage expiry, lib/enrichment/attempt-objects.ts): `s3:DeleteObject` on `EXPIRING_KEY_PATTERNS` only (lib/objects.ts), and `s3:ListBucket` to find them. */
  deletesObjects?: boolean;
  /** Whether the function starts enrichment executions. */
  startsWorkflow?: boolean;
  /** Whether the function stops enrichment executions (cancel, docs/launch.md#canceling): `states:StopExecution` on this state machine's executions. */
  stopsWorkflow?: boolean;
  /** Whether the function starts erasure jobs (docs/privacy.md "The erasure job"): `sqs:SendMessage` on the erasure queue. */
  startsErasures?: boolean;
}

/** One API route and the handler file of its Lambda. */
export interface ApiRoute {
  operation: Operation;
  /** Handler file, relative to the project root; it exports `handler`. */
  entry: string;
  /** Construct id of the function in the stack. */
  functionId: string;
  permissions: RoutePermissions;
}

/** Every API route. */
export const API_ROUTES: ApiRoute[] = [
  {
    operation: describeOrganizationOperation,
    entry: 'functions/org-describe.ts',
    functionId: 'OrgDescribe',
    permissions: { table: 'read' },
  },
  { operation: describeLimitsOperation, entry: 'functions/org-limits.ts', functionId: 'OrgLimits', permissions: { table: 'read' } },
  { operation: createKeyOperation, entry: 'functions/keys-create.ts', functionId: 'KeysCreate', permissions: { table: 'readWrite' } },
  { operation: listKeysOperation, entry: 'functions/keys-list.ts', functionId: 'KeysList', permissions: { table: 'read' } },
  { operation: orgUsageOperation, entry: 'functions/org-usage.ts', functionId: 'OrgUsage', permissions: { table: 'read' } },
  { operation: revokeKeyOperation, entry: 'functions/keys-revoke.ts', functionId: 'KeysRevoke', permissions: { table: 'readWrite' } },
  { operation: rotateKeyOperation, entry: 'functions/keys-rotate.ts', functionId: 'KeysRotate', permissions: { table: 'readWrite' } },
  // Create writes account lists and reads uploaded files (docs/campaigns.md#large-account-lists-upload-first); reading also needs ListBucket, so a file never PUT answers NoSuchKey, not 403.
  {
    operation: createCampaignOperation,
    entry: 'functions/campaigns-create.ts',
    functionId: 'CampaignsCreate',
    permissions: { table: 'readWrite', bucket: 'readWrite', bucketKeys: ['campaigns/*', 'uploads/*'] },
  },
  // Presigning a PUT needs s3:PutObject under uploads/ (the URL carries the function's authority); it reads nothing.
  {
    operation: createUploadOperation,
    entry: 'functions/uploads-create.ts',
    functionId: 'UploadsCreate',
    permissions: { table: 'readWrite', bucket: 'write', bucketKeys: ['uploads/*'] },
  },
  {
    operation: updateCampaignOperation,
    entry: 'functions/campaigns-update.ts',
    functionId: 'CampaignsUpdate',
    permissions: { table: 'readWrite' },
  },
  { operation: getCampaignOperation, entry: 'functions/campaigns-get.ts', functionId: 'CampaignsGet', permissions: { table: 'read' } },
  { operation: listCampaignsOperation, entry: 'functions/campaigns-list.ts', functionId: 'CampaignsList', permissions: { table: 'read' } },
  {
    operation: enrichCampaignOperation,
    entry: 'functions/campaigns-enrich.ts',
    functionId: 'CampaignsEnrich',
    permissions: { table: 'readWrite', bucket: 'readWrite', startsWorkflow: true, deletesObjects: true },
  },
  // Cancel stops the attempt's execution and deletes the canceled attempt's result parts and batch objects (docs/launch.md#canceling).
  {
    operation: cancelCampaignOperation,
    entry: 'functions/campaigns-cancel.ts',
    functionId: 'CampaignsCancel',
    permissions: { table: 'readWrite', stopsWorkflow: true, deletesObjects: true },
  },
  {
    operation: exportCampaignOperation,
    entry: 'functions/campaigns-export.ts',
    functionId: 'CampaignsExport',
    // readWrite: its audit entry (docs/audit.md).
    permissions: { table: 'readWrite', bucket: 'readWrite' },
  },
  // Reads the campaign, the sequence and the result parts; a long poll waits at most 20 s, inside the function's deadline.
  {
    operation: campaignResultsOperation,
    entry: 'functions/campaigns-results.ts',
    functionId: 'CampaignsResults',
    permissions: { table: 'read', bucket: 'read', bucketKeys: ['campaigns/*'] },
  },
  // The stream: the same reads as the page, for up to RESULTS_STREAM_MAX_SECONDS; in AWS behind its own function URL (infra/stack.ts).
  {
    operation: streamCampaignResultsOperation,
    entry: 'functions/campaigns-results-stream.ts',
    functionId: 'CampaignsResultsStream',
    permissions: { table: 'read', bucket: 'read', bucketKeys: ['campaigns/*'] },
  },
  { operation: listLedgerOperation, entry: 'functions/org-ledger.ts', functionId: 'OrgLedger', permissions: { table: 'read' } },
  { operation: listAuditOperation, entry: 'functions/org-audit.ts', functionId: 'OrgAudit', permissions: { table: 'read' } },
  // Quote reads what enrich reads (account lists, eligible lists of just-enriched campaigns) and writes nothing.
  {
    operation: quoteCampaignOperation,
    entry: 'functions/campaigns-quote.ts',
    functionId: 'CampaignsQuote',
    permissions: { table: 'read', bucket: 'read', bucketKeys: ['campaigns/*'] },
  },
  // Accounts reads the evaluations' outcome and contact-count objects (lib/enrichment/outcomes.ts), and with suppressions in force the attempt's result parts.
  {
    operation: campaignAccountsOperation,
    entry: 'functions/campaigns-accounts.ts',
    functionId: 'CampaignsAccounts',
    permissions: { table: 'read', bucket: 'read', bucketKeys: ['campaigns/*/evaluations/*', 'campaigns/*/attempts/*'] },
  },
  {
    operation: createWebhookEndpointOperation,
    entry: 'functions/webhooks-create.ts',
    functionId: 'WebhooksCreate',
    permissions: { table: 'readWrite' },
  },
  {
    operation: listWebhookEndpointsOperation,
    entry: 'functions/webhooks-list.ts',
    functionId: 'WebhooksList',
    permissions: { table: 'read' },
  },
  {
    operation: deleteWebhookEndpointOperation,
    entry: 'functions/webhooks-delete.ts',
    functionId: 'WebhooksDelete',
    permissions: { table: 'readWrite' },
  },
  {
    operation: rotateWebhookSecretOperation,
    entry: 'functions/webhooks-rotate-secret.ts',
    functionId: 'WebhooksRotateSecret',
    permissions: { table: 'readWrite' },
  },
  {
    operation: testWebhookEndpointOperation,
    entry: 'functions/webhooks-test.ts',
    functionId: 'WebhooksTest',
    permissions: { table: 'readWrite' },
  },
  {
    operation: listWebhookDeliveriesOperation,
    entry: 'functions/webhooks-deliveries.ts',
    functionId: 'WebhooksDeliveries',
    permissions: { table: 'read' },
  },
  { operation: listEventsOperation, entry: 'functions/events-list.ts', functionId: 'EventsList', permissions: { table: 'read' } },
  {
    operation: redeliverWebhookOperation,
    entry: 'functions/webhooks-redeliver.ts',
    functionId: 'WebhooksRedeliver',
    permissions: { table: 'readWrite' },
  },
  {
    operation: createSuppressionsOperation,
    entry: 'functions/privacy-suppressions-create.ts',
    functionId: 'PrivacySuppressionsCreate',
    permissions: { table: 'readWrite' },
  },
  {
    operation: listSuppressionsOperation,
    entry: 'functions/privacy-suppressions-list.ts',
    functionId: 'PrivacySuppressionsList',
    permissions: { table: 'read' },
  },
  {
    operation: deleteSuppressionOperation,
    entry: 'functions/privacy-suppressions-delete.ts',
    functionId: 'PrivacySuppressionsDelete',
    permissions: { table: 'readWrite' },
  },
  // Create suppresses, records the erasure and sends its job to the erasure queue; the job (lib/privacy/erasure.ts) rewrites results and deletes exports.
  {
    operation: createErasureOperation,
    entry: 'functions/privacy-erasures-create.ts',
    functionId: 'PrivacyErasuresCreate',
    permissions: { table: 'readWrite', startsErasures: true },
  },
  {
    operation: getErasureOperation,
    entry: 'functions/privacy-erasures-get.ts',
    functionId: 'PrivacyErasuresGet',
    permissions: { table: 'read' },
  },
  {
    operation: listErasuresOperation,
    entry: 'functions/privacy-erasures-list.ts',
    functionId: 'PrivacyErasuresList',
    permissions: { table: 'read' },
  },
];

/** The routes whose every call the audit log keeps (docs/audit.md): their operations are declared `audited`. */
export const AUDITED_ROUTES: ApiRoute[] = API_ROUTES.filter((route) => route.operation.audited);

/**
 * Whether an operation pages with signed cursors (docs/pagination.md): its
 * request has a `cursor` field. Only the functions of such operations (and
 * the MCP function when one of its tools does) receive the cursor-signing
 * secret (infra/stack.ts).
 */
export const usesCursors = (operation: Operation): boolean => 'cursor' in operation.request._zod.def.shape;

/**
 * The routes whose operations are MCP tools: every customer operation but those lib/contract/mcp.ts
 * `NOT_TOOLS` names (docs/agents.md), in this list's order. The MCP function calls their functions.
 */
// A streaming operation (docs/results.md "The stream") answers no envelope a tool call could hold: no tool.
export const MCP_ROUTES: ApiRoute[] = API_ROUTES.filter((route) => isMcpTool(route.operation));

/** The route of the guides the API reference links to (`GET /docs/<name>.md`, lib/http/docs.ts). */
export const GUIDES_ROUTE = '/docs/{guide}';

/** Paths of the published contract, the guides and the discovery documents (README.md, docs/agents.md), each a `GET` route of the docs function. */
export const DOCS_ROUTES = [
  '/openapi.json',
  '/asyncapi.json',
  '/docs',
  GUIDES_ROUTE,
  API_CATALOG_PATH,
  LLMS_TXT_PATH,
  SERVER_CARD_PATH,
] as const;

/** The guides of the repository's `docs/` folder (its `*.md` files), copied next to the docs function's handler. */
const guideFiles = (): string[] => {
  const folder = path.resolve(import.meta.dirname, '../docs');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(folder, name));
};

/** Functions besides the operations': the docs routes and the catch-all `$default` route (docs/errors.md, README.md). */
export const SUPPORT_FUNCTIONS = {
  docs: {
    entry: 'functions/api-docs.ts',
    functionId: 'ApiDocs',
    /** The renderer bundle the function inlines into the page, and the guides it serves, copied next to its handler. */
    assetFiles: (): string[] => [createRequire(import.meta.url).resolve(RENDERER_MODULE), ...guideFiles()],
  },
  catchAll: { entry: 'functions/catch-all.ts', functionId: 'CatchAll' },
  /** `GET /.well-known/jwks.json`: the erasure receipts' public keys (lib/privacy/receipt.ts); in AWS it may only read the KMS key's public part (infra/stack.ts). */
  jwks: { entry: 'functions/privacy-jwks.ts', functionId: 'PrivacyJwks', path: '/.well-known/jwks.json' },
  /**
   * The MCP server (docs/agents.md) at {@link MCP_PATH} (POST; GET and DELETE answer 405 from the server, stateless):
   * it runs the handlers of the tools' operations in its own process, so it holds their permissions together.
   */
  mcp: {
    entry: 'mcp/handler.ts',
    /** The local stack's server: the same, each tool call run in its own process (mcp/local.ts). */
    localEntry: 'mcp/local.ts',
    functionId: 'Mcp',
    path: MCP_PATH,
    methods: ['POST', 'GET', 'DELETE'],
  },
} as const;
