/**
 * Schemas of the organization operations (spec "Describe organization"); the
 * response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { treeShakable } from '../schemas';

/** `POST /v1/org/describe` (spec "Describe organization"): no body, an empty body or `{}`. */
export const describeOrganizationOperation = /* @__PURE__ */ defineOperation({
  operationId: 'describeOrganization',
  scope: 'org:read',
  path: '/v1/org/describe',
  request: /* @__PURE__ */ treeShakable(() => z.strictObject({})),
});

/** `POST /v1/org/limits` (docs/limits.md): no body, an empty body or `{}`. */
export const describeLimitsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'describeLimits',
  scope: 'org:read',
  path: '/v1/org/limits',
  request: /* @__PURE__ */ treeShakable(() => z.strictObject({})),
});
