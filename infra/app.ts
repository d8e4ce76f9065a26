/**
 * Entry point of the CDK CLI (`cdk.json` runs `npx tsx infra/app.ts`).
 *
 * `npx cdk synth -q` synthesizes `CampaignEnrichment-dev`;
 * `npx cdk synth -q -c stage=prod` the production stack. Account and region
 * come from the CLI's credentials (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION).
 */
import { buildApp } from './stack';

buildApp().app.synth();
