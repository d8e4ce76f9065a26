/** Lambda of `POST /v1/campaigns/export` (docs/csv.md). */
import { exportCampaignOperation } from '../lib/exports/schema';
import {
  apiHandler,
  campaignReader,
  results,
  exportCampaign,
  hourlyQuota,
  s3,
  setting,
  bucketNameSetting,
  exportUrlTtlSecondsSetting,
  deliveryPolicy,
} from '../lib/root';

export const handler = apiHandler(exportCampaignOperation, (input, { organizationId, writeAuditEntry }) =>
  exportCampaign(
    {
      campaigns: campaignReader(),
      results: results(),
      s3: s3(),
      bucketName: setting(bucketNameSetting),
      urlTtlSeconds: setting(exportUrlTtlSecondsSetting),
      quota: hourlyQuota('exports'),
      deliveryPolicy,
      ...(writeAuditEntry ? { auditEntry: writeAuditEntry } : {}),
    },
    organizationId,
    input,
  ),
);
