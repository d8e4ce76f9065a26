/**
 * The account ID and the size of an account list, as every list takes them
 * (campaign create, uploaded files, the operator's imports; decisions §1, §14).
 */
import * as z from 'zod/mini';
import { treeShakable } from '../schemas';

/** Largest number of account IDs in a campaign (decisions §1). */
export const MAX_ACCOUNT_IDS = 100_000;

/** An account ID as a campaign takes it (decisions §1): 1 to 128 characters, no control characters. */
export const AccountIdSchema = /* @__PURE__ */ treeShakable(() =>
  z.string().check(
    z.minLength(1),
    z.maxLength(128),
    // No control characters (decisions §1): C0, DEL and C1.
    z.regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, { error: 'must not contain control characters' }),
  ),
);
