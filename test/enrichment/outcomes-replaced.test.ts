/**
 * A batch of an evaluation that a new launch replaces while the batch records
 * its outcome (lib/enrichment/outcomes.ts `recordBatch`), against DynamoDB
 * Local and s3rver: the launch writes its manifest, then deletes the old
 * evaluation's objects; a batch that read the old manifest just before may
 * write its contacts object after that deletion listed the prefix. The
 * batch's refused manifest update makes it delete that object itself, so no
 * object of the replaced evaluation is left (storage expiry, issue #13).
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { s3 } from '../../lib/aws';
import { config } from '../../lib/config';
import { newCampaignId, newOrganizationId } from '../../lib/ids';
import { deleteEvaluation } from '../../lib/enrichment/attempt-objects';
import { objectKeys } from '../../lib/objects';
import { objects, outcomes } from '../../lib/root';
import { useApi } from '../support/api';

useApi();

async function keysUnder(prefix: string): Promise<string[]> {
  const page = await s3().send(new ListObjectsV2Command({ Bucket: config.bucketName, Prefix: prefix }));
  return (page.Contents ?? []).map((object) => object.Key!);
}

describe('recordBatch of a replaced evaluation', () => {
  it('a contacts object written after the replacing launch deleted the old evaluation is deleted by the batch, or by its retry; a counted retry keeps its object', async () => {
    const organizationId = newOrganizationId();
    const campaignId = newCampaignId();
    const evaluation = (evaluationId: string) => ({
      organizationId,
      campaignId,
      evaluationId,
      evaluatedAt: new Date().toISOString(),
      accountIds: ['acct_a', 'acct_b'],
      buckets: ['eligible', 'eligible'] as const,
      batchSize: 2,
    });
    const batch = { organizationId, campaignId, batch: { index: 0, offset: 0, count: 2 }, contactsFound: [3, 0] };
    await outcomes().recordEvaluation(evaluation('att_old'));
    const oldPrefix = objectKeys.evaluationPrefix(organizationId, campaignId, 'att_old');

    // The batch's contacts object is sent; just before it lands, a new launch replaces the evaluation and deletes the old one's objects.
    const name = 'replaceBeforeTheObjectLands';
    let replaced = false;
    s3().middlewareStack.add(
      (next, context) => async (args) => {
        if (!replaced && context.commandName === 'PutObjectCommand' && JSON.stringify(args.input).includes(`${oldPrefix}contacts/`)) {
          replaced = true;
          await outcomes().recordEvaluation(evaluation('att_new'));
          await deleteEvaluation({ objects: objects() }, { organizationId, campaignId, attemptId: 'att_old' });
          expect(await keysUnder(oldPrefix)).toEqual([]);
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      expect(await outcomes().recordBatch({ ...batch, evaluationId: 'att_old' })).toBe(false);
    } finally {
      s3().middlewareStack.remove(name);
    }
    expect(replaced).toBe(true);
    expect(await keysUnder(oldPrefix)).toEqual([]);

    // The current evaluation's batch, recorded twice (a retried task): counted once, its object kept.
    expect(await outcomes().recordBatch({ ...batch, evaluationId: 'att_new' })).toBe(true);
    expect(await outcomes().recordBatch({ ...batch, evaluationId: 'att_new' })).toBe(false);
    expect(await keysUnder(`${objectKeys.evaluationPrefix(organizationId, campaignId, 'att_new')}contacts/`)).toHaveLength(1);
    expect(await outcomes().manifest(campaignId)).toMatchObject({ evaluationId: 'att_new', found: 1, notFound: 1, contactsFound: 3 });

    // A try of the old evaluation's batch that died after writing its object (before it could see the replacement):
    // the retry finds the evaluation replaced and deletes the object.
    const orphan = `${oldPrefix}contacts/000000.json`;
    await s3().send(new PutObjectCommand({ Bucket: config.bucketName, Key: orphan, Body: '[3,0]' }));
    expect(await keysUnder(oldPrefix)).toEqual([orphan]);
    expect(await outcomes().recordBatch({ ...batch, evaluationId: 'att_old' })).toBe(false);
    expect(await keysUnder(oldPrefix)).toEqual([]);
  });
});
