import { afterAll, expect } from 'vitest';
import { openApiDocument } from '../../src/http/openapi.js';
import { systemClock, type Webhooks, type WebhooksOptions } from '../../src/index.js';
import type { Cleanup } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { serveHandler } from '../helpers/http.js';
import { type CheckResult, checkResponse } from '../helpers/openapi-check.js';

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

/** helpers/engine.ts's makeEngine (its own name, so a file never has two) with the HTTP tests' `authorize` and a conformance-checked handler. */
export async function makeHttpEngine(options: Partial<WebhooksOptions> = {}): Promise<TestEngine> {
  const engine = await makeEngine({ clock: systemClock, issuer: 'https://auth.example.com', authorize: bearerAuth, ...options });
  return {
    hooks: engine.hooks,
    handler: conforming(engine.hooks.handler),
    logged: engine.logged,
    file: engine.filename,
    close: () => engine.close(),
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
export async function engineAndClient(mode: 'direct' | 'http', cleanups: Cleanup[], options: Partial<WebhooksOptions> = {}) {
  const engine = await makeHttpEngine(options);
  cleanups.push(() => engine.close());
  let base: string | null = null;
  if (mode === 'http') {
    const server = await serveHandler(engine.handler);
    cleanups.push(() => server.close());
    base = server.url;
  }
  return { engine, api: client(engine.handler, base) };
}
