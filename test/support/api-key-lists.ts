/**
 * Test helper for the organizations' lists of active API keys
 * (lib/organizations/api-keys.ts): an organization made to look as one
 * stored before the list existed.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../lib/aws';
import { config } from '../../lib/config';
import * as keys from '../../lib/db/keys';

/** Removes an organization's list and its completeness mark, as on an item written before the list (default table: the stack's). */
export const asBeforeTheList = (organizationId: string, tableName = config.tableName) =>
  ddb.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.organization(organizationId),
      UpdateExpression: 'REMOVE activeApiKeys, activeApiKeysSince',
    }),
  );
