/**
 * The account ID and the size of an account list, as every list takes them
 * (campaign create, uploaded files, the operator's imports; docs/campaigns.md).
 */
import * as z from 'zod/mini';
import { treeShakable } from '../schemas';

/** Largest number of account IDs in a campaign (docs/campaigns.md). */
export const MAX_ACCOUNT_IDS = 100_000;

/** An account ID as a campaign takes it (docs/campaigns.md): 1 to 128 characters, no control characters. */
export const AccountIdSchema = /* @__PURE__ */ treeShakable(() =>
  z.string().check(
    z.minLength(1),
    z.maxLength(128),
    // No control characters (docs/campaigns.md): C0, DEL and C1.
    z.regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, { error: 'must not contain control characters' }),
  ),
);
