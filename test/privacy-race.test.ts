/**
 * docs/privacy.md "Erasure" and "Suppressions": "Accepting an erasure suppresses each identifier at once (locked
 * entries), so nothing matching is delivered from the answer on", and a locked entry answers 409 `suppression_locked`
 * to a delete. A customer's delete of an identifier that interleaves with a suppression of the same identifier (an
 * erasure's, or the customer's own) must never leave an entry listed whose hash is not in the compact set every
 * delivery path reads. Real store against DynamoDB Local; a client wrapper pauses one of the two at a chosen write,
 * as a slow Lambda would.
 */
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { createSuppressionStore, setKey } from '../lib/privacy/store';
import { hashIdentifier } from '../lib/warehouse/identifiers';
import { newOrganization, useApi } from './support/api';

useApi();

type Sent = {
  input?: { UpdateExpression?: string; Item?: { type?: string }; TransactItems?: { Update?: { UpdateExpression?: string } }[] };
};

/** A client that holds the first command `matches` picks until `release` is called; `reached` resolves when it is held. */
function pausing(matches: (command: Sent) => boolean) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let paused = false;
  const client = new Proxy(ddb, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: Sent) => {
        if (!paused && matches(command)) {
          paused = true;
          reach();
          await held;
        }
        return target.send(command as never);
      };
    },
  });
  return { store: createSuppressionStore({ client: client as typeof ddb, tableName: config.tableName }), reached, release };
}

/** The write that removes a hash from the set: an UpdateItem of its own, or an item of a transaction. */
const removesFromSet = (command: Sent) =>
  [command.input?.UpdateExpression, ...(command.input?.TransactItems ?? []).map((item) => item.Update?.UpdateExpression)].some(
    (expression) => expression?.startsWith('DELETE #set'),
  );
/** The write of a suppression entry (after suppress's set `ADD`). */
const writesEntry = (command: Sent) => command.input?.Item?.type === 'suppression';

const store = () => createSuppressionStore({ client: ddb, tableName: config.tableName });
const hashed = hashIdentifier({ type: 'email', value: 'ann@example.com' })!;

async function state(organizationId: string) {
  const listed = await store().listSuppressions(organizationId, {}, undefined, 10);
  const inSet = (await store().hashSet(organizationId)).has(setKey(hashed.hash));
  return { listed: listed.items.map((s) => s.origin), inSet };
}

describe('suppressions/delete racing a suppression of the same identifier', () => {
  it('an erasure accepted while the delete is at its set write leaves the locked hash in the set', async () => {
    const { organizationId } = await newOrganization();
    const customer = pausing(removesFromSet);
    const [entry] = await store().suppress(organizationId, [hashed], 'opt_out', 'customer', new Date());
    const deleting = customer.store.unsuppress(organizationId, entry!.id);
    await customer.reached;
    const [locked] = await store().suppress(organizationId, [hashed], 'customer_request', 'erasure', new Date());
    customer.release();
    // Either order is a valid outcome of the two; what is listed must be in force.
    expect(['removed', 'locked']).toContain(await deleting);
    expect(locked!.id).toBe(entry!.id);
    expect(await state(organizationId)).toEqual({ listed: ['erasure'], inSet: true });
  });

  it("a delete that runs between an erasure's set write and its entry write leaves the erasure in force", async () => {
    const { organizationId } = await newOrganization();
    const [entry] = await store().suppress(organizationId, [hashed], 'opt_out', 'customer', new Date());
    const erasure = pausing(writesEntry);
    const suppressing = erasure.store.suppress(organizationId, [hashed], 'customer_request', 'erasure', new Date());
    await erasure.reached;
    expect(await store().unsuppress(organizationId, entry!.id)).toBe('removed');
    erasure.release();
    expect((await suppressing).map((s) => s.origin)).toEqual(['erasure']);
    expect(await state(organizationId)).toEqual({ listed: ['erasure'], inSet: true });
  });

  it("the customer's own create and delete of one identifier: listed means in force, deleted means delivered", async () => {
    const { organizationId } = await newOrganization();
    const [entry] = await store().suppress(organizationId, [hashed], 'opt_out', 'customer', new Date());
    const again = pausing(writesEntry);
    const suppressing = again.store.suppress(organizationId, [hashed], 'opt_out', 'customer', new Date());
    await again.reached;
    expect(await store().unsuppress(organizationId, entry!.id)).toBe('removed');
    again.release();
    await suppressing;
    expect(await state(organizationId)).toEqual({ listed: ['customer'], inSet: true });
    expect(await store().unsuppress(organizationId, entry!.id)).toBe('removed');
    expect(await state(organizationId)).toEqual({ listed: [], inSet: false });
  });
});
