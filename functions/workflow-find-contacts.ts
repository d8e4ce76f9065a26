/** Workflow task: find contacts for one batch of eligible accounts. */
import {
  accountLists,
  campaigns,
  deliveryPolicy,
  objects,
  outcomes,
  results,
  sequence,
  warehouseFor,
  pacingFor,
  createTaskHandler,
  findContactsBatch,
  resultsAccessPeriodFor,
  copyIndexFor,
} from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof findContactsBatch>[1]) =>
  findContactsBatch(
    {
      accountLists: accountLists(),
      warehouse: warehouseFor(input.organizationId),
      results: results(),
      outcomes: outcomes(),
      campaigns: campaigns(),
      objects: objects(),
      sequence: sequence(),
      resultsAccessPeriodSeconds: resultsAccessPeriodFor(input.organizationId),
      deliveryPolicy,
      pacing: pacingFor(input.organizationId),
      copies: copyIndexFor(input.organizationId),
    },
    input,
  ),
);
