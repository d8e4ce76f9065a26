/**
 * The Arazzo 1.0 workflow "enrich a list and export" (issue #34): the
 * multi-call flow upload → create → quote → enrich → results as they
 * arrive → webhook or poll → export, over the operations of the OpenAPI document (by operationId).
 *
 * `npm run openapi:write` writes it to `docs/arazzo.json`;
 * `npm run openapi:check` fails when that file differs from this output;
 * `npm run openapi:lint` lints it with Redocly (Arazzo rules), and
 * test/asyncapi-arazzo.test.ts checks every operationId against docs/openapi.json.
 */
import { MAX_UPLOAD_BYTES } from '../uploads/schema';

/** The Arazzo source name of the OpenAPI document (the committed docs/openapi.json, beside this file). */
export const ARAZZO_SOURCE = 'campaignEnrichmentApi';

const auth = { name: 'Authorization', in: 'header', value: 'Bearer {$inputs.apiKey}' } as const;
const CAMPAIGN_ID = '$steps.createCampaign.outputs.campaignId';
/** A `$response.body` JSONPath criterion: a filter expression (`$[?(@.data.status == 'enriched')]`) that selects the body when it holds; single-quoted strings. */
const bodyIs = (condition: string) => ({ context: '$response.body', condition, type: 'jsonpath' }) as const;

/**
 * One step: a call of `operationId` with the API key, a JSON body, success
 * on 200 (and `also`), and `idempotencyKey` (a suffix of the run's key) for
 * the operations that honour `Idempotency-Key`.
 */
function step(
  stepId: string,
  operationId: string,
  description: string,
  payload: Record<string, unknown>,
  options: { idempotencyKey?: string; also?: object[]; onFailure?: object[]; outputs: Record<string, string> },
) {
  return {
    stepId,
    description,
    operationId,
    parameters: [
      auth,
      ...(options.idempotencyKey
        ? [{ name: 'Idempotency-Key', in: 'header', value: `{$inputs.idempotencyKey}-${options.idempotencyKey}` }]
        : []),
    ],
    requestBody: { contentType: 'application/json', payload },
    successCriteria: [{ condition: '$statusCode == 200' }, ...(options.also ?? [])],
    ...(options.onFailure ? { onFailure: options.onFailure } : {}),
    outputs: options.outputs,
  };
}

/**
 * Builds the Arazzo document.
 * @returns an Arazzo 1.0.1 document (JSON-serializable) whose steps name operations of docs/openapi.json.
 */
export function buildArazzoDocument() {
  return {
    arazzo: '1.0.1',
    info: {
      title: 'Campaign Enrichment API workflows',
      version: '1.0.0',
      summary: 'Enrich an account list and export the results.',
      description:
        'Calls of the Campaign Enrichment API (docs/openapi.json) in the order a customer makes them. Every call carries `Authorization: Bearer <API key>`; the mutating ones an `Idempotency-Key`, so that a retry never runs twice.',
    },
    sourceDescriptions: [{ name: ARAZZO_SOURCE, url: './openapi.json', type: 'openapi' }],
    workflows: [
      {
        workflowId: 'enrichListAndExport',
        summary:
          'Upload an account list, create a campaign from it, quote and launch its enrichment, read its results as they arrive, wait for it, export the results.',
        description: [
          '1. `createUpload` presigns a PUT URL for the account-ID file.',
          `   \`uploadAccountList\` PUTs the file (one ID a line, optional header row, at most ${MAX_UPLOAD_BYTES / 1_000_000} MB) to that \`url\` with the \`Content-Type\` given: a plain HTTP PUT to storage, not an operation of this API (the step's \`x-operation\`, which Redocly Respect runs).`,
          '2. `createCampaign` with `accountIdsUploadId` (lists that fit a request body can send `accountIds` instead and skip step 1).',
          '3. `quoteCampaign`: the credits and capacity the launch would take; the workflow ends unless `outcome` is `launchable`.',
          '4. `enrichCampaign` charges the credits and starts the enrichment.',
          '5. `listCampaignResults` reads the contacts as JSON while the campaign enriches (docs/results.md): each account once, by `seq`; the next page asks `afterSeq` = `lastSeq` until `complete` (or `streamCampaignResults` streams them over one connection).',
          '6. Wait for `enriched`: either a webhook endpoint subscribed to `campaign.enriched` receives the event (docs/asyncapi.json), or `getCampaign` is polled, as here, until `status` is `enriched`.',
          '7. `exportCampaign` writes the CSV file and answers its presigned URL (valid until `urlExpiresAt`, never past `resultsExpireAt`).',
        ].join('\n'),
        inputs: {
          type: 'object',
          required: ['apiKey', 'name', 'idempotencyKey', 'accountIdsFile'],
          properties: {
            apiKey: { type: 'string', description: 'The organization API key (`cek_…`).' },
            name: { type: 'string', minLength: 1, maxLength: 200, description: 'The campaign name.' },
            accountIdsFile: {
              type: 'string',
              minLength: 1,
              description: 'The account list: one account ID a line (the `accountIdsFile` format).',
            },
            idempotencyKey: {
              type: 'string',
              description: 'A fresh unique value per run (e.g. a UUID): the prefix of each mutating call’s `Idempotency-Key`.',
            },
          },
        },
        steps: [
          step(
            'createUpload',
            'createUpload',
            'Presign the upload of the account list (the PUT must send `Content-Type: text/csv`).',
            { contentType: 'text/csv' },
            {
              idempotencyKey: 'upload',
              outputs: { uploadId: '$response.body#/data/uploadId', url: '$response.body#/data/url' },
            },
          ),
          {
            stepId: 'uploadAccountList',
            description:
              'PUT the account-ID file to the presigned `url` (storage, not this API: no API key), with the `Content-Type` the upload was presigned for.',
            'x-operation': { url: '$steps.createUpload.outputs.url', method: 'PUT' },
            parameters: [{ name: 'Content-Type', in: 'header', value: 'text/csv' }],
            requestBody: { contentType: 'text/csv', payload: '$inputs.accountIdsFile' },
            successCriteria: [{ condition: '$statusCode == 200' }],
          },
          step(
            'createCampaign',
            'createCampaign',
            'Create the campaign (a `draft`) from the uploaded list.',
            { name: '$inputs.name', accountIdsUploadId: '$steps.createUpload.outputs.uploadId' },
            {
              idempotencyKey: 'create',
              outputs: { campaignId: '$response.body#/data/id' },
            },
          ),
          step(
            'quoteCampaign',
            'quoteCampaign',
            'What the launch would charge and whether it would be refused; nothing is charged or written.',
            { campaignId: CAMPAIGN_ID },
            {
              also: [bodyIs("$[?(@.data.outcome == 'launchable')]")],
              onFailure: [{ name: 'notLaunchable', type: 'end' }],
              outputs: { creditsRequired: '$response.body#/data/credits/required', outcome: '$response.body#/data/outcome' },
            },
          ),
          step(
            'enrichCampaign',
            'enrichCampaign',
            'Launch the enrichment: the campaign is `enriching`, its credits charged.',
            { campaignId: CAMPAIGN_ID },
            {
              idempotencyKey: 'enrich',
              outputs: { charged: '$response.body#/data/credits/charged' },
            },
          ),
          step(
            'readResults',
            'listCampaignResults',
            'Read the contacts as they arrive, as JSON (docs/results.md): a long poll from `afterSeq` 0 that answers as soon as accounts are readable, asked again until the attempt is `complete`. A list longer than one page (`limit`, at most 1,000) asks each next page with `afterSeq` = the answer’s `lastSeq`; `POST /v1/campaigns/results/stream` gives the same accounts over one connection.',
            { campaignId: CAMPAIGN_ID, afterSeq: 0, limit: 1_000, waitSeconds: 20, hasEmail: true },
            {
              also: [bodyIs('$[?(@.data.complete == true)]')],
              onFailure: [
                {
                  name: 'resultsStillArriving',
                  type: 'retry',
                  retryAfter: 1,
                  retryLimit: 720,
                  criteria: [bodyIs('$[?(@.data.complete == false)]')],
                },
              ],
              outputs: {
                attemptId: '$response.body#/data/attemptId',
                lastSeq: '$response.body#/data/lastSeq',
                accounts: '$response.body#/data/accounts',
              },
            },
          ),
          step(
            'waitForEnrichment',
            'getCampaign',
            'Poll the campaign until it is `enriched` (or receive `campaign.enriched` on a webhook endpoint instead).',
            { campaignId: CAMPAIGN_ID },
            {
              also: [bodyIs("$[?(@.data.status == 'enriched')]")],
              onFailure: [
                {
                  name: 'stillEnriching',
                  type: 'retry',
                  retryAfter: 5,
                  retryLimit: 720,
                  criteria: [bodyIs("$[?(@.data.status == 'enriching')]")],
                },
              ],
              outputs: { results: '$response.body#/data/results', resultsExpireAt: '$response.body#/data/resultsExpireAt' },
            },
          ),
          step(
            'exportCampaign',
            'exportCampaign',
            'Write the CSV file of contacts with an email address, at most 3 per account, and get its URL.',
            { campaignId: CAMPAIGN_ID, maxContactsPerAccount: 3, hasEmail: true },
            {
              outputs: {
                url: '$response.body#/data/url',
                urlExpiresAt: '$response.body#/data/urlExpiresAt',
                contacts: '$response.body#/data/rows/contacts',
              },
            },
          ),
        ],
        outputs: {
          campaignId: CAMPAIGN_ID,
          exportUrl: '$steps.exportCampaign.outputs.url',
          exportUrlExpiresAt: '$steps.exportCampaign.outputs.urlExpiresAt',
        },
      },
    ],
  };
}
