/**
 * The published contract of the privacy operations and events beyond what
 * their handlers need (docs/privacy.md): the response shapes, the bodies of
 * `privacy.erasure_completed` and `privacy.contact_erased`, summaries,
 * descriptions and examples. Only the contract builders (lib/contract/)
 * import its values.
 */
import * as z from 'zod/mini';
import { count, timestamp, campaignId } from '../schemas';
import { documentOperation } from '../http/operation';
import { ERASURE_REGIMES, ERASURE_STATUSES, SUPPRESSION_REASONS } from './store';
import {
  IdentifierTypeSchema,
  MAX_ERASURE_IDENTIFIERS,
  MAX_SUPPRESSION_IDENTIFIERS,
  createErasureOperation,
  createSuppressionsOperation,
  deleteSuppressionOperation,
  erasureIdSchema,
  getErasureOperation,
  listErasuresOperation,
  listSuppressionsOperation,
  suppressionIdSchema,
} from './schema';
import type { PrivacyEventType } from '../webhooks/events';

const hash = () =>
  z.string().check(
    z.regex(/^[0-9a-f]{64}$/),
    z.meta({
      description: 'SHA-256 in hex of `type + ":" + normalized value`: the only form the service keeps.',
      example: '5f1c3e0a0c1d9b6f0f1f6a2b2f6f7d1f0b9c3a5e8d7c6b5a4f3e2d1c0b9a8f7e',
    }),
  );

/** An identifier as stored and answered: type and hash, never the value. */
export const HashedIdentifierSchema = z
  .strictObject({ type: IdentifierTypeSchema, hash: hash() })
  .check(z.meta({ id: 'HashedIdentifier' }));

/** A suppression. */
export const SuppressionSchema = z
  .strictObject({
    id: suppressionIdSchema(),
    type: IdentifierTypeSchema,
    hash: hash(),
    reason: z.enum(SUPPRESSION_REASONS),
    origin: z.enum(['customer', 'erasure']).check(
      z.meta({
        description: '`customer`: made by suppressions/create, deletable; `erasure`: made by an erasure, locked (`suppression_locked`).',
      }),
    ),
    createdAt: timestamp(),
  })
  .check(z.meta({ id: 'Suppression' }));

/** What a completed erasure removed. */
export const ErasureResultSchema = z
  .strictObject({
    contactsRemoved: count().check(z.meta({ description: 'Contact rows removed from stored results.' })),
    resultObjectsRewritten: count().check(z.meta({ description: 'Stored result objects rewritten without them.' })),
    exportsDeleted: count().check(
      z.meta({ description: 'Unexpired export files deleted (their URLs stop working): every export of a campaign that held a match.' }),
    ),
    campaignIds: z.array(campaignId()).check(z.meta({ description: 'Campaigns that held a match, sorted.' })),
  })
  .check(z.meta({ id: 'ErasureResult' }));

/** An erasure. */
export const ErasureSchema = z
  .strictObject({
    id: erasureIdSchema(),
    requestRef: z.string(),
    regime: z.enum(ERASURE_REGIMES),
    status: z.enum(ERASURE_STATUSES).check(
      z.meta({
        description: '`pending` (accepted: already suppressed), `running`, `completed` (with `result` and `receipt`), `failed`.',
      }),
    ),
    identifiers: z.array(HashedIdentifierSchema).check(z.minLength(1), z.maxLength(MAX_ERASURE_IDENTIFIERS)),
    createdAt: timestamp(),
    completedAt: z.nullable(timestamp()),
    result: z.nullable(ErasureResultSchema),
    receipt: z.nullable(z.string()).check(
      z.meta({
        description:
          'Compact JWS (ES256) over `{erasureId, organizationId, requestRef, regime, identifiers, result, completedAt}`; verify it with the keys at `GET /.well-known/jwks.json`. Null until completed.',
      }),
    ),
  })
  .check(z.meta({ id: 'Erasure' }));

const EXAMPLE_HASH = '5f1c3e0a0c1d9b6f0f1f6a2b2f6f7d1f0b9c3a5e8d7c6b5a4f3e2d1c0b9a8f7e';
const EXAMPLE_SUPPRESSION = {
  id: 'sup_5kP9qR2sT7vW3xY8zA4bC',
  type: 'email',
  hash: EXAMPLE_HASH,
  reason: 'opt_out',
  origin: 'customer',
  createdAt: '2026-11-22T09:30:00.000Z',
};
const EXAMPLE_ERASURE = {
  id: 'era_8mN3pQ7rS2tV6wX9yZ4aB',
  requestRef: 'DSR-2026-0042',
  regime: 'gdpr',
  status: 'completed',
  identifiers: [{ type: 'email', hash: EXAMPLE_HASH }],
  createdAt: '2026-11-22T09:30:00.000Z',
  completedAt: '2026-11-22T09:30:04.512Z',
  result: { contactsRemoved: 3, resultObjectsRewritten: 3, exportsDeleted: 1, campaignIds: ['camp_7Hq2kXv9LmN3pR5sT8wYz'] },
  receipt: 'eyJhbGciOiJFUzI1NiIsImtpZCI6Ii4uLiJ9.eyJlcmFzdXJlSWQiOiJlcmFfLi4uIn0.c2lnbmF0dXJl',
};

const pageOf = (name: string, item: z.core.$ZodType, id: string) =>
  z.strictObject({ [name]: z.array(item), nextCursor: z.nullable(z.string()) }).check(z.meta({ id }));

/** The privacy operations, documented. */
export const privacyOperationDocs = [
  documentOperation(createSuppressionsOperation, {
    creates: '/suppressions/0/id',
    summary: 'Suppress identifiers',
    description: `Keeps a person out of every answer to the organization: a contact matching any suppressed identifier (of the organization, or of the operator's global list) is never delivered again, by results, stream, export or the accounts' \`contactsFound\`; a new launch charges only accounts that keep a contact. Values are normalized and kept only as SHA-256 hashes. Idempotent per identifier: an existing suppression is answered as it is. 1 to ${MAX_SUPPRESSION_IDENTIFIERS} identifiers.`,
    response: z.strictObject({ suppressions: z.array(SuppressionSchema) }).check(z.meta({ id: 'CreatedSuppressions' })),
    errors: ['invalid_request', 'revoked_api_key', 'idempotency_key_reused', 'idempotency_key_in_use'],
    example: { identifiers: [{ type: 'email', value: 'ann@example.com' }], reason: 'opt_out' },
    responseExample: { suppressions: [EXAMPLE_SUPPRESSION] },
  }),
  documentOperation(listSuppressionsOperation, {
    summary: "List the organization's suppressions",
    description:
      "The organization's own suppressions (the operator's global list is not shown), in ID order. Pass `nextCursor` unchanged as `cursor` with the same filters and limit.",
    response: pageOf('suppressions', SuppressionSchema, 'SuppressionPage'),
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { type: 'email' }, limit: 100 },
    responseExample: { suppressions: [EXAMPLE_SUPPRESSION], nextCursor: null },
  }),
  documentOperation(deleteSuppressionOperation, {
    summary: 'Delete a suppression',
    description:
      'Removes a suppression the organization made: matching contacts may be delivered again. A suppression an erasure made cannot be deleted (409 `suppression_locked`).',
    response: z.strictObject({ id: suppressionIdSchema(), deleted: z.literal(true) }).check(z.meta({ id: 'DeletedSuppression' })),
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'suppression_locked', 'idempotency_key_reused', 'idempotency_key_in_use'],
    example: { id: 'sup_5kP9qR2sT7vW3xY8zA4bC' },
    responseExample: { id: 'sup_5kP9qR2sT7vW3xY8zA4bC', deleted: true },
  }),
  documentOperation(createErasureOperation, {
    creates: '/id',
    summary: 'Erase a person',
    description: `Accepts an erasure of a person (1 to ${MAX_ERASURE_IDENTIFIERS} identifiers): each identifier is suppressed at once (locked), then a job removes every stored copy of the matching contacts from the organization's data (stored results rewritten without them, export files of the campaigns that held them deleted) and ends \`completed\` with \`result\`, a signed \`receipt\` and the event \`privacy.erasure_completed\`. The same \`requestRef\` answers the same erasure. Poll erasures/get.`,
    response: ErasureSchema,
    errors: ['invalid_request', 'revoked_api_key', 'idempotency_key_reused', 'idempotency_key_in_use'],
    example: { identifiers: [{ type: 'email', value: 'ann@example.com' }], regime: 'gdpr', requestRef: 'DSR-2026-0042' },
    responseExample: { ...EXAMPLE_ERASURE, status: 'pending', completedAt: null, result: null, receipt: null },
  }),
  documentOperation(getErasureOperation, {
    summary: 'Get an erasure',
    description: 'One erasure of the organization, with its `result` and `receipt` once `completed`.',
    response: ErasureSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found'],
    example: { id: 'era_8mN3pQ7rS2tV6wX9yZ4aB' },
    responseExample: EXAMPLE_ERASURE,
  }),
  documentOperation(listErasuresOperation, {
    summary: "List the organization's erasures",
    description:
      "The organization's erasures in ID order, optionally of one status. Pass `nextCursor` unchanged as `cursor` with the same filters and limit.",
    response: pageOf('erasures', ErasureSchema, 'ErasurePage'),
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { status: 'completed' } },
    responseExample: { erasures: [EXAMPLE_ERASURE], nextCursor: null },
  }),
];

/** The body of `privacy.erasure_completed`. */
export const ErasureCompletedEventPayloadSchema = z
  .strictObject({ type: z.literal('privacy.erasure_completed'), timestamp: timestamp(), data: z.strictObject({ erasure: ErasureSchema }) })
  .check(z.meta({ id: 'WebhookEvent_privacy_erasure_completed' }));

/** The body of `privacy.contact_erased`. */
export const ContactErasedEventPayloadSchema = z
  .strictObject({
    type: z.literal('privacy.contact_erased'),
    timestamp: timestamp(),
    data: z.strictObject({
      contactId: z.string().check(z.meta({ description: 'The erased contact (`contact_id` of your exports).' })),
      identifiers: z.array(HashedIdentifierSchema).check(z.meta({ description: 'The identifiers erased, as hashes.' })),
      campaignIds: z.array(campaignId()).check(z.meta({ description: 'Your campaigns that were delivered the contact.' })),
    }),
  })
  .check(z.meta({ id: 'WebhookEvent_privacy_contact_erased' }));

/** The privacy events with their body schemas, in document order. */
export const privacyEventPayloadSchemas = () =>
  [
    ['privacy.erasure_completed', ErasureCompletedEventPayloadSchema] as const,
    ['privacy.contact_erased', ContactErasedEventPayloadSchema] as const,
  ] as const;

/** What each privacy event means. */
export const PRIVACY_EVENT_DESCRIPTIONS: Record<PrivacyEventType, string> = {
  'privacy.erasure_completed':
    'An erasure the organization asked for completed: `data.erasure` as erasures/get shows it, with its result and signed receipt.',
  'privacy.contact_erased':
    "The vendor erased a contact the organization was delivered (e.g. a data-broker deletion request): delete your own copies of it. Names only the organization's own campaigns.",
};

/** A real-looking body of each privacy event. */
export const PRIVACY_EVENT_EXAMPLES: Record<PrivacyEventType, unknown> = {
  'privacy.erasure_completed': {
    type: 'privacy.erasure_completed',
    timestamp: EXAMPLE_ERASURE.completedAt,
    data: { erasure: EXAMPLE_ERASURE },
  },
  'privacy.contact_erased': {
    type: 'privacy.contact_erased',
    timestamp: '2026-11-22T09:30:04.512Z',
    data: { contactId: 'con_000123', identifiers: [{ type: 'email', hash: EXAMPLE_HASH }], campaignIds: ['camp_7Hq2kXv9LmN3pR5sT8wYz'] },
  },
};

/** Sizes the documents state. */
export const PRIVACY_LIMITS = {
  maxSuppressionIdentifiers: MAX_SUPPRESSION_IDENTIFIERS,
  maxErasureIdentifiers: MAX_ERASURE_IDENTIFIERS,
} as const;
