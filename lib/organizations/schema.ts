/**
 * Schemas of the organization operations (spec "Describe organization"); the
 * response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';

/** `POST /v1/org/describe` (spec "Describe organization"): no body, an empty body or `{}`. */
export const describeOrganizationOperation = /* @__PURE__ */ defineOperation({
  operationId: 'describeOrganization',
  path: '/v1/org/describe',
  request: z.strictObject({}),
});
