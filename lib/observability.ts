/**
 * Structured JSON logging (AWS Powertools Logger) and business metrics
 * (AWS Powertools Metrics, CloudWatch embedded metric format), one of each
 * per process. Every API log line carries the request id and, once
 * authenticated, the organization id (see `lib/http/pipeline.ts`).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/** Service name in logs and metrics. */
export const SERVICE_NAME = 'campaign-enrichment-api';
/** CloudWatch namespace of the business metrics (the dashboard reads it). */
export const METRICS_NAMESPACE = 'CampaignEnrichment';

/** The process-wide logger; level from `POWERTOOLS_LOG_LEVEL` (default INFO). */
export const logger = new Logger({ serviceName: SERVICE_NAME });

let metrics: Metrics | undefined;
// Built on first use: a bundle whose handler emits no metric leaves the Metrics class out (bench "bundle size").
const businessMetrics = (): Metrics => (metrics ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }));

/** Business metrics (counts; credits in credits). */
export type BusinessMetric =
  | 'CampaignsLaunched'
  | 'CreditsCharged'
  | 'CreditsRefunded'
  | 'AccountsEnriched'
  | 'EnrichmentsFailed'
  | 'EnrichmentsCanceled'
  | 'ExportRows'
  | 'LedgerDrift'
  | 'EnrichmentsRepaired'
  | 'CapacityDrift'
  | 'WebhookMessagesDelivered'
  | 'WebhookAttemptsFailed'
  | 'WebhookMessagesFailed';

/**
 * The metric of `rate_limited` answers, per organization (dimension
 * `organizationId`; docs/limits.md), in {@link METRICS_NAMESPACE}. Drawn by a
 * metric filter of each API function's log group from the `Request
 * completed` line every answer already writes (its `errorCode` and
 * `organizationId`; lib/http/request-id.ts), so a refusal writes nothing
 * more and the API bundles carry no metrics library (infra/stack.ts).
 */
export const RATE_LIMITED_METRIC = 'RateLimited';

/**
 * Emits business metrics at once (one EMF line). Disabled with
 * `POWERTOOLS_METRICS_DISABLED=true` (the local stack and tests).
 */
export function emitMetrics(values: Partial<Record<BusinessMetric, number>>): void {
  const sink = businessMetrics();
  for (const [name, value] of Object.entries(values)) sink.addMetric(name, MetricUnit.Count, value);
  sink.publishStoredMetrics();
}
