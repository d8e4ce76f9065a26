/**
 * The local server's newcomer path (README.md#set-up): `GET /` points at the docs,
 * the OpenAPI document and the health check; `GET /local/demo-key` hands the
 * demo organization's key to local tools only; `GET /health` answers 503
 * with what is still starting until every readiness step is done. Real HTTP
 * against infra/local/server.ts (`npm start` itself: test/quickstart.test.ts).
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_KEY_PATH,
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  listenEarly,
  startApiServer,
  TEST_KEY_PATH,
} from '../infra/local/server';
import { apiKeys, organizations } from '../lib/root';
import { READINESS_STEPS, Readiness } from '../infra/local/readiness';
import { newOrganization } from './support/api';

type Started = Awaited<ReturnType<typeof startApiServer>>;

/** A GET with a chosen Host header (fetch does not let a caller set it). */
function get(url: string, host?: string): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: host ? { host } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

let withDemo: Started;
let withoutDemo: Started;
let demoApiKey: string;
let testApiKey: string;

beforeAll(async () => {
  let organizationId: string;
  ({ apiKey: demoApiKey, organizationId } = await newOrganization({ name: 'Local demo' }));
  testApiKey = await apiKeys().create((await organizations().testTwin(organizationId)).id);
  [withDemo, withoutDemo] = await Promise.all([
    startApiServer({ port: 0, healthCheck: async () => undefined, demoApiKey, testApiKey }),
    startApiServer({ port: 0, healthCheck: async () => undefined }),
  ]);
});

afterAll(async () => {
  await Promise.all([withDemo?.close(), withoutDemo?.close()]);
});

describe('GET /', () => {
  it('answers JSON with links to /docs, /openapi.json, /health and the discovery documents, and the operations', async () => {
    const res = await get(`${withoutDemo.url}/`);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    const body = JSON.parse(res.text);
    expect(body.links).toEqual({
      docs: `${withoutDemo.url}/docs`,
      openapi: `${withoutDemo.url}/openapi.json`,
      asyncapi: `${withoutDemo.url}/asyncapi.json`,
      health: `${withoutDemo.url}/health`,
      apiCatalog: `${withoutDemo.url}/.well-known/api-catalog`,
      llms: `${withoutDemo.url}/llms.txt`,
    });
    expect(body.operations).toEqual(
      expect.arrayContaining(['POST /v1/org/describe', 'POST /v1/campaigns/create', 'POST /v1/campaigns/export']),
    );
    // Every link works.
    for (const link of Object.values(body.links) as string[]) expect((await get(link)).status, link).toBe(200);
  });

  it('links the demo key endpoint when the stack has a demo organization, and never carries a key itself', async () => {
    const res = await get(`${withDemo.url}/`);
    const body = JSON.parse(res.text);
    expect(body.links.demoApiKey).toBe(`${withDemo.url}${DEMO_KEY_PATH}`);
    expect(body.links.testApiKey).toBe(`${withDemo.url}${TEST_KEY_PATH}`);
    expect(res.text).not.toContain(demoApiKey);
    expect(res.text).not.toContain(testApiKey);
  });
});

describe('GET /local/test-key', () => {
  it("answers the demo organization's test key to a loopback request; it acts in test mode", async () => {
    const res = await get(`${withDemo.url}${TEST_KEY_PATH}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe(`${testApiKey}\n`);
    const describe = await fetch(`${withDemo.url}/v1/org/describe`, { method: 'POST', headers: { authorization: `Bearer ${testApiKey}` } });
    expect(describe.status).toBe(200);
    expect(describe.headers.get('test-mode')).toBe('true');
    expect((await get(`${withDemo.url}${TEST_KEY_PATH}`, 'evil.example')).status).toBe(403);
    expect((await get(`${withoutDemo.url}${TEST_KEY_PATH}`)).status).toBe(404);
  });
});

describe('GET /local/demo-key', () => {
  it('answers the demo key as text to a loopback request, and the key works', async () => {
    const port = new URL(withDemo.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST']) {
      const res = await get(`${withDemo.url}${DEMO_KEY_PATH}`, host);
      expect(res.status, host).toBe(200);
      expect(res.contentType).toMatch(/^text\/plain/);
      expect(res.text).toBe(`${demoApiKey}\n`);
    }
    const describe = await fetch(`${withDemo.url}/v1/org/describe`, { method: 'POST', headers: { authorization: `Bearer ${demoApiKey}` } });
    expect(describe.status).toBe(200);
  });

  it('refuses a request addressed to another host name (a page that rebinds its domain to 127.0.0.1)', async () => {
    for (const host of ['evil.example', 'evil.example:80', '127.0.0.1.evil.example']) {
      const res = await get(`${withDemo.url}${DEMO_KEY_PATH}`, host);
      expect(res.status, host).toBe(403);
      expect(res.text).not.toContain(demoApiKey);
    }
  });

  it('does not exist on a server without a demo organization (tests, bench)', async () => {
    const res = await get(`${withoutDemo.url}${DEMO_KEY_PATH}`);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text).error.code).toBe('not_found');
  });
});

describe('keep-alive (issue #19: a reused connection is never dropped)', () => {
  /** One request on `agent`; reports whether it reused a socket and which local port it used. */
  function post(
    agent: Agent,
    url: string,
    apiKey: string,
  ): Promise<{ status: number; reused: boolean; localPort: number; keepAlive: string }> {
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            reused: req.reusedSocket,
            localPort: req.socket?.localPort ?? 0,
            keepAlive: String(res.headers['keep-alive'] ?? ''),
          }),
        );
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('keeps an idle connection longer than common clients do, and headers wait longer still', () => {
    for (const started of [withDemo, withoutDemo]) {
      expect(started.server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
      expect(started.server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    }
    // undici (Node fetch) idles 4 s, the server used to close at 5 s: now the client always closes first.
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
    expect(HEADERS_TIMEOUT_MS).toBeGreaterThan(KEEP_ALIVE_TIMEOUT_MS);
  });

  it("answers a request on a connection reused right at the client's idle boundary (4 s, like undici)", async () => {
    const clientIdleMs = 4_000;
    const agent = new Agent({ keepAlive: true, maxSockets: 1, timeout: clientIdleMs });
    try {
      const url = `${withDemo.url}/v1/org/describe`;
      const first = await post(agent, url, demoApiKey);
      expect(first.status).toBe(200);
      // The server advertises its own idle timeout, so a client that honours the hint waits no longer.
      expect(first.keepAlive).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
      for (const pauseMs of [clientIdleMs - 300, clientIdleMs - 100]) {
        await sleep(pauseMs);
        const again = await post(agent, url, demoApiKey);
        expect(again, `after ${pauseMs} ms idle`).toMatchObject({ status: 200, reused: true, localPort: first.localPort });
      }
    } finally {
      agent.destroy();
    }
  });
});

describe('GET /health while the stack starts (README.md#set-up)', () => {
  const json = async (url: string) => {
    const res = await get(url);
    return { status: res.status, body: JSON.parse(res.text) };
  };

  it('answers 503 with what is still starting from the moment the port listens, and 200 only once every step is done', async () => {
    const readiness = new Readiness();
    const early = await listenEarly({ port: 0, readiness });
    let started: Started | undefined;
    try {
      // Listening, nothing loaded: /health, the demo key and the API all say what is still starting.
      const first = await json(`${early.url}/health`);
      expect(first).toEqual({
        status: 503,
        body: {
          status: 'starting',
          starting: [...READINESS_STEPS],
          message: expect.stringContaining('GET /health answers 200 once it is ready'),
        },
      });
      expect((await get(`${early.url}${DEMO_KEY_PATH}`)).status).toBe(503);
      expect((await fetch(`${early.url}/v1/org/describe`, { method: 'POST' })).status).toBe(503);

      let healthChecks = 0;
      started = await startApiServer({ port: 0, listening: early, readiness, healthCheck: async () => void healthChecks++ });
      expect(started.url).toBe(early.url);
      for (const [i, step] of READINESS_STEPS.entries()) {
        const answer = await json(`${early.url}/health`);
        expect(answer.status, `before "${step}"`).toBe(503);
        expect(answer.body.starting).toEqual(READINESS_STEPS.slice(i));
        if (step === 'demo data') {
          // Not ready and no key yet: the demo key answers 503 (starting), never 404.
          expect((await get(`${early.url}${DEMO_KEY_PATH}`)).status).toBe(503);
          started.serveDemoApiKey(demoApiKey);
        }
        readiness.done(step);
      }
      // The backing services are only asked once the stack is ready.
      expect(healthChecks).toBe(0);
      expect(await json(`${early.url}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      expect(healthChecks).toBe(1);
      expect((await get(`${early.url}${DEMO_KEY_PATH}`)).text).toBe(`${demoApiKey}\n`);
    } finally {
      if (started) await started.close();
      else await new Promise((resolve) => early.server.close(resolve));
    }
  });

  it('answers 503 with the reason when a backing service stops answering after the stack was ready', async () => {
    const readiness = new Readiness([]);
    const started = await startApiServer({
      port: 0,
      readiness,
      healthCheck: async () => Promise.reject(new Error('DynamoDB Local does not answer')),
    });
    try {
      expect(await json(`${started.url}/health`)).toEqual({
        status: 503,
        body: { status: 'unavailable', reason: 'DynamoDB Local does not answer' },
      });
    } finally {
      await started.close();
    }
  });
});
