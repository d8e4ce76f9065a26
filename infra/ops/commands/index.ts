/**
 * Every operator CLI command, in the order `--help` lists them. A new
 * command is a {@link defineCommand} value in one of these modules (or a new
 * one) plus its entry here.
 */
import type { OpsCommand } from '../command';
import { campaignCancel } from './campaigns';
import { creditsReconcile } from './credits';
import { campaignImport, crmImport, warehouseImport } from './imports';
import { keyCreate, keyList, keyRevoke, orgCapacity, orgCreate, orgCredits, orgLimits } from './organizations';
import { migrate } from './migrate';
import { privacyErase, privacyIntake } from './privacy';

/** The commands of `npx ops`, in help order. */
export const COMMANDS: readonly OpsCommand<any>[] = [
  orgCreate,
  orgCredits,
  orgCapacity,
  orgLimits,
  keyCreate,
  keyList,
  keyRevoke,
  warehouseImport,
  crmImport,
  campaignImport,
  campaignCancel,
  creditsReconcile,
  privacyErase,
  privacyIntake,
  migrate,
];
