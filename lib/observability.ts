/**
 * Structured JSON logging (AWS Powertools Logger), one logger per process.
 * Every API log line carries the request id and, once authenticated, the
 * organization id (see `lib/http/pipeline.ts`).
 */
import { Logger } from '@aws-lambda-powertools/logger';

/** The process-wide logger; level from `POWERTOOLS_LOG_LEVEL` (default INFO). */
export const logger = new Logger({ serviceName: 'campaign-enrichment-api' });
