/**
 * Keys the customer controls (docs/authentication.md): keys/create (the
 * secret once), keys/list (cursor, never a secret), keys/revoke, keys/rotate
 * (24 h overlap, the clock injected), expiry, a key granting only scopes it
 * holds, and a test key managing test keys only. Over HTTP against the local stack.
 */
import { describe, expect, it } from 'vitest';
import { apiKeys, createKey, organizations, rotateKey } from '../lib/root';
import { ROTATION_OVERLAP_SECONDS } from '../lib/organizations/api-keys';
import { latestKeyExpiry } from '../lib/organizations/schema';
import { call, newOrganization, useApi } from './support/api';

const api = useApi();
const DAY_MS = 86_400_000;

const describeWith = (apiKey: string) => call(api(), '/v1/org/describe', { apiKey });

describe('keys/create and keys/list', () => {
  it('shows the secret once; the key works with its scopes; list pages by cursor and never shows a secret', async () => {
    const org = await newOrganization();
    const created = await call(api(), '/v1/keys/create', {
      apiKey: org.apiKey,
      body: { name: 'Reader', scopes: ['org:read', 'campaigns:read'], limits: { monthlyCredits: 500 } },
    });
    expect(created.status).toBe(200);
    const { key, secret } = created.data;
    expect(secret).toMatch(/^cek_[1-9A-HJ-NP-Za-km-z]{40}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'Reader',
      prefix: secret.slice(0, 12),
      scopes: ['org:read', 'campaigns:read'],
      limits: { maxCreditsPerLaunch: null, monthlyCredits: 500 },
      createdAt: expect.any(String),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      test: false,
    });
    expect((await describeWith(secret)).status).toBe(200);
    expect((await call(api(), '/v1/org/ledger', { apiKey: secret, body: {} })).error).toMatchObject({
      code: 'insufficient_scope',
      details: { required: 'ledger:read' },
    });

    for (let i = 0; i < 3; i++)
      await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: `More ${i}`, scopes: ['org:read'] } });
    const seen: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: { limit: 2, ...(cursor ? { cursor } : {}) } });
      expect(page.status).toBe(200);
      expect(page.data.keys.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.keys);
      cursor = page.data.nextCursor ?? undefined;
    } while (cursor);
    // The organization's first key (the operator's, every scope), the reader and three more.
    expect(seen).toHaveLength(5);
    expect(new Set(seen.map((k) => k.id)).size).toBe(5);
    expect(JSON.stringify(seen)).not.toContain(secret);
    expect(seen.find((k) => k.name === 'Operator key')).toMatchObject({ scopes: expect.arrayContaining(['keys:manage', 'usage:read']) });
  });

  it("lastUsedAt: the minute of the key's last use (written at most once per minute per process), null for a key never used", async () => {
    const org = await newOrganization();
    const create = (name: string) => call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name, scopes: ['org:read'] } });
    const used = (await create('Used')).data;
    const idle = (await create('Idle')).data;
    expect(used.key.lastUsedAt).toBeNull();
    const minute = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
    const from = Date.now();
    for (let i = 0; i < 3; i++) expect((await describeWith(used.secret)).status).toBe(200);
    const to = Date.now();
    const listed = (await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: {} })).data.keys as {
      id: string;
      lastUsedAt: string | null;
    }[];
    const lastUsedAt = (id: string) => listed.find((k) => k.id === id)!.lastUsedAt;
    expect([minute(from), minute(to)]).toContain(lastUsedAt(used.key.id));
    expect(lastUsedAt(idle.key.id)).toBeNull();
    // The organization's own key made the calls above: used too.
    expect(listed.filter((k) => k.lastUsedAt !== null).map((k) => k.id)).toHaveLength(2);
  });

  it('a key cannot grant a scope it lacks, and needs keys:manage to create', async () => {
    const org = await newOrganization();
    const manager = (
      await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Manager', scopes: ['keys:manage', 'org:read'] } })
    ).data.secret as string;
    const refused = await call(api(), '/v1/keys/create', {
      apiKey: manager,
      body: { name: 'Launcher', scopes: ['org:read', 'campaigns:launch'] },
    });
    expect(refused.status).toBe(403);
    expect(refused.error).toMatchObject({ code: 'insufficient_scope', details: { required: 'campaigns:launch' } });
    const allowed = await call(api(), '/v1/keys/create', { apiKey: manager, body: { name: 'Reader', scopes: ['org:read'] } });
    expect(allowed.status).toBe(200);
    const reader = allowed.data.secret as string;
    expect((await call(api(), '/v1/keys/create', { apiKey: reader, body: { name: 'X', scopes: ['org:read'] } })).error).toMatchObject({
      code: 'insufficient_scope',
      details: { required: 'keys:manage' },
    });
    // Nothing was written by the refusals: the operator key, the manager and the reader.
    expect(
      (await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: {} })).data.keys.map((k: { name: string }) => k.name).sort(),
    ).toEqual(['Manager', 'Operator key', 'Reader']);
  });

  it('refuses a bad body naming the field, and an expiry in the past or over a year ahead', async () => {
    const org = await newOrganization();
    const cases: [unknown, string][] = [
      [{ name: '', scopes: ['org:read'] }, 'name'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['org:write'] }, 'scopes'],
      [{ name: 'x', scopes: ['org:read'], expiresAt: new Date(Date.now() - 1000).toISOString() }, 'expiresAt'],
      [{ name: 'x', scopes: ['org:read'], expiresAt: new Date(Date.now() + 400 * DAY_MS).toISOString() }, 'expiresAt'],
      // A minute past the same date and time next year ("≤ 1 year ahead"; 365 days and a half is past it).
      [{ name: 'x', scopes: ['org:read'], expiresAt: new Date(latestKeyExpiry(new Date()).getTime() + 60_000).toISOString() }, 'expiresAt'],
      [{ name: 'x', scopes: ['org:read'], limits: { monthlyCredits: 0 } }, 'limits.monthlyCredits'],
    ];
    for (const [body, field] of cases) {
      const res = await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error?.details?.issues.join('\n')).toContain(field);
    }
    expect((await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: {} })).data.keys).toHaveLength(1);
    // A minute before that date next year is answered.
    const expiresAt = new Date(latestKeyExpiry(new Date()).getTime() - 60_000).toISOString();
    const year = await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'A year', scopes: ['org:read'], expiresAt } });
    expect(year.status).toBe(200);
    expect(year.data.key.expiresAt).toBe(expiresAt);
  });

  it('a key with credit limits creates a key that may launch only with its limits or tighter ones', async () => {
    const org = await newOrganization();
    const capped = (
      await call(api(), '/v1/keys/create', {
        apiKey: org.apiKey,
        body: { name: 'Capped', scopes: ['keys:manage', 'campaigns:launch', 'org:read'], limits: { monthlyCredits: 10 } },
      })
    ).data.secret as string;
    for (const limits of [undefined, { maxCreditsPerLaunch: 5 }, { monthlyCredits: 11 }]) {
      const refused = await call(api(), '/v1/keys/create', {
        apiKey: capped,
        body: { name: 'Looser', scopes: ['campaigns:launch'], ...(limits ? { limits } : {}) },
      });
      expect(refused.status, JSON.stringify(limits)).toBe(400);
      expect(refused.error?.details?.issues.join('\n')).toContain('limits.monthlyCredits: at most 10');
    }
    // The same limit or a tighter one, or a key that cannot launch (its limits would bind nothing): created.
    for (const [name, scopes, limits, expected] of [
      ['Same', ['campaigns:launch'], { monthlyCredits: 10 }, { maxCreditsPerLaunch: null, monthlyCredits: 10 }],
      ['Tighter', ['campaigns:launch'], { monthlyCredits: 3, maxCreditsPerLaunch: 2 }, { maxCreditsPerLaunch: 2, monthlyCredits: 3 }],
      ['Reader', ['org:read'], undefined, { maxCreditsPerLaunch: null, monthlyCredits: null }],
    ] as const) {
      const made = await call(api(), '/v1/keys/create', { apiKey: capped, body: { name, scopes, ...(limits ? { limits } : {}) } });
      expect(made.status, name).toBe(200);
      expect(made.data.key.limits, name).toEqual(expected);
    }
    expect(
      (await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: {} })).data.keys.map((k: { name: string }) => k.name).sort(),
    ).toEqual(['Capped', 'Operator key', 'Reader', 'Same', 'Tighter']);
  });

  it('a test key creates test keys of the test twin only', async () => {
    const org = await newOrganization();
    const twin = await organizations().testTwin(org.organizationId);
    const testKey = await apiKeys().create(twin.id);
    const created = await call(api(), '/v1/keys/create', { apiKey: testKey, body: { name: 'Test reader', scopes: ['org:read'] } });
    expect(created.status).toBe(200);
    expect(created.data.secret).toMatch(/^cek_test_/);
    expect(created.data.key.test).toBe(true);
    const testList = (await call(api(), '/v1/keys/list', { apiKey: testKey, body: {} })).data.keys as { test: boolean }[];
    expect(testList.every((k) => k.test)).toBe(true);
    // The live key's list holds no test key, and a test key cannot revoke a live one.
    const liveList = (await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: {} })).data.keys as { id: string; test: boolean }[];
    expect(liveList.every((k) => !k.test)).toBe(true);
    expect((await call(api(), '/v1/keys/revoke', { apiKey: testKey, body: { id: liveList[0]!.id } })).error).toMatchObject({
      code: 'not_found',
    });
    expect((await describeWith(org.apiKey)).status).toBe(200);
  });
});

describe('keys/revoke, keys/rotate and expiry', () => {
  it('revoke: the key answers 401 revoked_api_key from the next request on', async () => {
    const org = await newOrganization();
    const { key, secret } = (await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Temp', scopes: ['org:read'] } }))
      .data;
    expect((await describeWith(secret)).status).toBe(200);
    const revoked = await call(api(), '/v1/keys/revoke', { apiKey: org.apiKey, body: { id: key.id } });
    expect(revoked.status).toBe(200);
    expect(revoked.data.key.revokedAt).toEqual(expect.any(String));
    expect((await describeWith(secret)).error?.code).toBe('revoked_api_key');
    expect((await call(api(), '/v1/keys/revoke', { apiKey: org.apiKey, body: { id: 'key_111111111111111111111' } })).error).toMatchObject({
      code: 'not_found',
    });
  });

  it('rotate: both secrets work during the overlap, then only the new one (clock injected)', async () => {
    const org = await newOrganization();
    const { key, secret: first } = (
      await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Rotating', scopes: ['org:read'] } })
    ).data;
    expect((await describeWith(first)).status).toBe(200);
    const rotated = await call(api(), '/v1/keys/rotate', { apiKey: org.apiKey, body: { id: key.id } });
    expect(rotated.status).toBe(200);
    const second = rotated.data.secret as string;
    expect(rotated.data.key).toMatchObject({ id: key.id, prefix: second.slice(0, 12) });
    // Within the 24 h: both.
    expect((await describeWith(first)).status).toBe(200);
    expect((await describeWith(second)).status).toBe(200);
    // A rotation made 24 h and a minute ago (injected clock): the secret it replaced has stopped.
    const past = new Date(Date.now() - ROTATION_OVERLAP_SECONDS * 1000 - 60_000);
    const third = (
      await rotateKey(
        { apiKeys: apiKeys(), now: () => past },
        { organizationId: org.organizationId, keyCheck: { scopes: undefined, limits: undefined } },
        { id: key.id },
      )
    ).secret;
    expect((await describeWith(second)).error?.code).toBe('expired_api_key');
    expect((await describeWith(third)).status).toBe(200);
    // The first secret, rotated out earlier, stopped with the second rotation.
    expect((await describeWith(first)).error?.code).toBe('expired_api_key');
    // Revoking the key stops every secret.
    await call(api(), '/v1/keys/revoke', { apiKey: org.apiKey, body: { id: key.id } });
    expect((await describeWith(third)).error?.code).toBe('revoked_api_key');
    expect((await call(api(), '/v1/keys/rotate', { apiKey: org.apiKey, body: { id: key.id } })).status).toBe(400);
  });

  it('rotate: a key rotates only keys it could create (the new secret carries their scopes and limits); nothing changes otherwise', async () => {
    const org = await newOrganization();
    const keyAdmin = (await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Key admin', scopes: ['keys:manage'] } }))
      .data.secret as string;
    const listed = (await call(api(), '/v1/keys/list', { apiKey: keyAdmin, body: {} })).data.keys as {
      id: string;
      name: string;
      prefix: string;
    }[];
    const operator = listed.find((k) => k.name === 'Operator key')!;
    // The operator key holds every scope: its new secret would be a key admin's way to all of them.
    const refused = await call(api(), '/v1/keys/rotate', { apiKey: keyAdmin, body: { id: operator.id } });
    expect(refused.status).toBe(403);
    expect(refused.error).toMatchObject({ code: 'insufficient_scope' });
    // A key with credit limits may not rotate a launching key without them.
    const capped = (
      await call(api(), '/v1/keys/create', {
        apiKey: org.apiKey,
        body: { name: 'Capped admin', scopes: ['keys:manage', 'campaigns:launch'], limits: { maxCreditsPerLaunch: 50 } },
      })
    ).data.secret as string;
    const launcher = (
      await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Launcher', scopes: ['campaigns:launch'] } })
    ).data.key as { id: string; prefix: string };
    const looser = await call(api(), '/v1/keys/rotate', { apiKey: capped, body: { id: launcher.id } });
    expect(looser.status).toBe(400);
    expect(looser.error?.details?.issues.join('\n')).toContain('id: the key may launch with a looser maxCreditsPerLaunch');
    // Nothing was rotated: the same prefixes, and the operator's secret still the only one it has.
    const after = (await call(api(), '/v1/keys/list', { apiKey: org.apiKey, body: {} })).data.keys as { id: string; prefix: string }[];
    expect(after.find((k) => k.id === operator.id)!.prefix).toBe(operator.prefix);
    expect(after.find((k) => k.id === launcher.id)!.prefix).toBe(launcher.prefix);
    expect((await describeWith(org.apiKey)).status).toBe(200);
    // A key within the admin's reach rotates.
    const reader = (await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Managed', scopes: ['keys:manage'] } })).data
      .key as { id: string };
    expect((await call(api(), '/v1/keys/rotate', { apiKey: keyAdmin, body: { id: reader.id } })).status).toBe(200);
  });

  it('expiry: a key past its expiresAt answers 401 expired_api_key', async () => {
    const org = await newOrganization();
    // Created "two days ago" (injected clock) to expire yesterday.
    const twoDaysAgo = new Date(Date.now() - 2 * DAY_MS);
    const { secret } = await createKey(
      { apiKeys: apiKeys(), now: () => twoDaysAgo },
      { organizationId: org.organizationId, keyCheck: { scopes: undefined, limits: undefined } },
      { name: 'Short-lived', scopes: ['org:read'], expiresAt: new Date(Date.now() - DAY_MS).toISOString() },
    );
    const res = await describeWith(secret);
    expect(res.status).toBe(401);
    expect(res.error?.code).toBe('expired_api_key');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});
