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
  /** Construct id of the function in the stack: {@link functionIdOf} its entry. */
  functionId: string;
  permissions: RoutePermissions;
}

/**
 * The construct ID of a route's function: its handler file's name in PascalCase (`functions/keys-create.ts` →
 * `KeysCreate`), so the stack's logical IDs follow from the one column kept by hand.
 */
export const functionIdOf = (entry: string): string =>
  path
    .basename(entry, '.ts')
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** A route: its operation, its handler file (relative to the project root) and its function's permissions. */
const route = (operation: Operation, entry: string, permissions: RoutePermissions): ApiRoute => ({
  operation,
  entry,
  functionId: functionIdOf(entry),
  permissions,
});

/** Every API route. */
export const API_ROUTES: ApiRoute[] = [
  route(describeOrganizationOperation, 'functions/org-describe.ts', { table: 'read' }),
  route(describeLimitsOperation, 'functions/org-limits.ts', { table: 'read' }),
  route(createKeyOperation, 'functions/keys-create.ts', { table: 'readWrite' }),
  route(listKeysOperation, 'functions/keys-list.ts', { table: 'read' }),
  route(orgUsageOperation, 'functions/org-usage.ts', { table: 'read' }),
  route(revokeKeyOperation, 'functions/keys-revoke.ts', { table: 'readWrite' }),
  route(rotateKeyOperation, 'functions/keys-rotate.ts', { table: 'readWrite' }),
  // Create writes account lists and reads uploaded files (docs/campaigns.md#large-account-lists-upload-first); reading also needs ListBucket, so a file never PUT answers NoSuchKey, not 403.
  route(createCampaignOperation, 'functions/campaigns-create.ts', {
    table: 'readWrite',
    bucket: 'readWrite',
    bucketKeys: ['campaigns/*', 'uploads/*'],
  }),
  // Presigning a PUT needs s3:PutObject under uploads/ (the URL carries the function's authority); it reads nothing.
  route(createUploadOperation, 'functions/uploads-create.ts', { table: 'readWrite', bucket: 'write', bucketKeys: ['uploads/*'] }),
  route(updateCampaignOperation, 'functions/campaigns-update.ts', { table: 'readWrite' }),
  route(getCampaignOperation, 'functions/campaigns-get.ts', { table: 'read' }),
  route(listCampaignsOperation, 'functions/campaigns-list.ts', { table: 'read' }),
  route(enrichCampaignOperation, 'functions/campaigns-enrich.ts', {
    table: 'readWrite',
    bucket: 'readWrite',
    startsWorkflow: true,
    deletesObjects: true,
  }),
  // Cancel stops the attempt's execution and deletes the canceled attempt's result parts and batch objects (docs/launch.md#canceling).
  route(cancelCampaignOperation, 'functions/campaigns-cancel.ts', { table: 'readWrite', stopsWorkflow: true, deletesObjects: true }),
  // readWrite: its audit entry (docs/audit.md).
  route(exportCampaignOperation, 'functions/campaigns-export.ts', { table: 'readWrite', bucket: 'readWrite' }),
  // Reads the campaign, the sequence and the result parts; a long poll waits at most 20 s, inside the function's deadline.
  route(campaignResultsOperation, 'functions/campaigns-results.ts', { table: 'read', bucket: 'read', bucketKeys: ['campaigns/*'] }),
  // The stream: the same reads as the page, for up to RESULTS_STREAM_MAX_SECONDS; in AWS behind its own function URL (infra/stack.ts).
  route(streamCampaignResultsOperation, 'functions/campaigns-results-stream.ts', {
    table: 'read',
    bucket: 'read',
    bucketKeys: ['campaigns/*'],
  }),
  route(listLedgerOperation, 'functions/org-ledger.ts', { table: 'read' }),
  route(listAuditOperation, 'functions/org-audit.ts', { table: 'read' }),
  // Quote reads what enrich reads (account lists, eligible lists of just-enriched campaigns) and writes nothing.
  route(quoteCampaignOperation, 'functions/campaigns-quote.ts', { table: 'read', bucket: 'read', bucketKeys: ['campaigns/*'] }),
  // Accounts reads the evaluations' outcome and contact-count objects (lib/enrichment/outcomes.ts), and with suppressions in force the attempt's result parts.
  route(campaignAccountsOperation, 'functions/campaigns-accounts.ts', {
    table: 'read',
    bucket: 'read',
    bucketKeys: ['campaigns/*/evaluations/*', 'campaigns/*/attempts/*'],
  }),
  route(createWebhookEndpointOperation, 'functions/webhooks-create.ts', { table: 'readWrite' }),
  route(listWebhookEndpointsOperation, 'functions/webhooks-list.ts', { table: 'read' }),
  route(deleteWebhookEndpointOperation, 'functions/webhooks-delete.ts', { table: 'readWrite' }),
  route(rotateWebhookSecretOperation, 'functions/webhooks-rotate-secret.ts', { table: 'readWrite' }),
  route(testWebhookEndpointOperation, 'functions/webhooks-test.ts', { table: 'readWrite' }),
  route(listWebhookDeliveriesOperation, 'functions/webhooks-deliveries.ts', { table: 'read' }),
  route(listEventsOperation, 'functions/events-list.ts', { table: 'read' }),
  route(redeliverWebhookOperation, 'functions/webhooks-redeliver.ts', { table: 'readWrite' }),
  route(createSuppressionsOperation, 'functions/privacy-suppressions-create.ts', { table: 'readWrite' }),
  route(listSuppressionsOperation, 'functions/privacy-suppressions-list.ts', { table: 'read' }),
  route(deleteSuppressionOperation, 'functions/privacy-suppressions-delete.ts', { table: 'readWrite' }),
  // Create suppresses, records the erasure and sends its job to the erasure queue; the job (lib/privacy/erasure.ts) rewrites results and deletes exports.
  route(createErasureOperation, 'functions/privacy-erasures-create.ts', { table: 'readWrite', startsErasures: true }),
  route(getErasureOperation, 'functions/privacy-erasures-get.ts', { table: 'read' }),
  route(listErasuresOperation, 'functions/privacy-erasures-list.ts', { table: 'read' }),
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
