import { afterAll, expect } from 'vitest';
import { createWebhooks, type Webhooks, type WebhooksOptions } from '../src/index.js';
import { sqliteStore } from '../adapters/sqlite/index.js';
import { checkResponse, type CheckResult } from './helpers/openapi-check.js';
import { openApiDocument } from '../src/http/openapi.js';
import { testKey } from './helpers/fixtures.js';
import { serveHandler, tempDir } from './helpers/http.js';

/**
 * Shared setup of the HTTP tests: an engine on a real SQLite file whose `authorize` reads
 * `authorization: Bearer env-<name>`, and a handler wrapper that checks every response against
 * the OpenAPI document. Importing this file registers an afterAll that fails the file if any
 * response did not conform.
 */

export type Handler = (request: Request) => Promise<Response>;

/** `Bearer env-a` is environment `env-a`; anything else is refused. */
export function bearerAuth(request: Request) {
  const m = /^Bearer (env-[a-z0-9-]+)$/.exec(request.headers.get('authorization') ?? '');
  return m ? { environment: m[1]! } : null;
}

const doc = openApiDocument();
export const checked: CheckResult[] = [];

/** Wraps a handler so every response it gives is checked against the OpenAPI document. */
export function conforming(handler: Handler): Handler {
  return async (request) => {
    const { method, url } = request;
    const response = await handler(request);
    const body = await response.clone().text();
    checked.push(checkResponse(doc, { method, url, status: response.status, headers: response.headers, body }));
    return response;
  };
}

afterAll(() => {
  const bad = checked.filter((c) => c.problems.length > 0);
  const kinds = new Set(checked.map((c) => c.key));
  console.log(`OpenAPI conformance: ${checked.length} responses checked, ${kinds.size} distinct operation/status pairs, ${bad.length} bad`);
  expect(bad, `${bad.length} of ${checked.length} responses do not match the OpenAPI document`).toEqual([]);
});

export interface TestEngine {
  hooks: Webhooks;
  /** `hooks.handler`, checked against the OpenAPI document. */
  handler: Handler;
  /** What the engine logged as errors. */
  logged: string[];
  file: string;
  close(): Promise<void>;
}

export async function makeEngine(options: Partial<WebhooksOptions> = {}): Promise<TestEngine> {
  const dir = tempDir('iw-http-');
  const logged: string[] = [];
  const file = dir.file('x.db');
  const hooks = createWebhooks({
    store: sqliteStore({ filename: file }),
    keys: [await testKey()],
    issuer: 'https://auth.example.com',
    allowPrivateNetworks: true,
    authorize: bearerAuth,
    logger: { warn: () => {}, error: (message, meta) => logged.push(`${message} ${JSON.stringify(meta ?? {})}`) },
    ...options,
  });
  return {
    hooks,
    handler: conforming(hooks.handler),
    logged,
    file,
    async close() {
      await hooks.close();
      dir.cleanup();
    },
  };
}

export const createBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'CRM sync',
  endpoint: 'https://crm.example.com/hooks',
  event_types: ['user.created'],
  ...overrides,
});

/** A client for one handler: direct `Request`s, or over real HTTP when `base` is an http URL. */
export function client(handler: Handler, base: string | null) {
  return async (
    method: string,
    path: string,
    init: { env?: string | null; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.env !== null) headers.authorization ??= `Bearer ${init.env ?? 'env-a'}`;
    let body: BodyInit | undefined = init.raw;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const req: RequestInit = { method, headers, ...(body === undefined ? {} : { body, duplex: 'half' }) } as RequestInit;
    const res = base === null ? await handler(new Request(`http://auth.test${path}`, req)) : await fetch(`${base}${path}`, req);
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined; // e.g. a framework's own HTML error page
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}

/**
 * An engine and a client for it, driven directly with Request objects (`direct`) or over real
 * HTTP on 127.0.0.1 (`http`); what it opens is pushed onto `cleanups`.
 */
export async function engineAndClient(
  mode: 'direct' | 'http',
  cleanups: Array<() => Promise<unknown>>,
  options: Partial<WebhooksOptions> = {},
) {
  const engine = await makeEngine(options);
  cleanups.push(() => engine.close());
  let base: string | null = null;
  if (mode === 'http') {
    const server = await serveHandler(engine.handler);
    cleanups.push(() => server.close());
    base = server.url;
  }
  return { engine, api: client(engine.handler, base) };
}
