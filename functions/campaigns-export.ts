/** Lambda of `POST /v1/campaigns/export` (docs/csv.md). */
import { exportCampaignOperation } from '../lib/exports/schema';
import { apiHandler, campaigns, results, exportCampaign, hourlyQuota, s3, config, deliveryPolicy } from '../lib/root';

export const handler = apiHandler(exportCampaignOperation, (input, { organizationId, writeAuditEntry }) =>
  exportCampaign(
    {
      campaigns: campaigns(),
      results: results(),
      s3: s3(),
      bucketName: config.bucketName,
      urlTtlSeconds: config.exportUrlTtlSeconds,
      quota: hourlyQuota('exports'),
      deliveryPolicy,
      ...(writeAuditEntry ? { auditEntry: writeAuditEntry } : {}),
    },
    organizationId,
    input,
  ),
);
