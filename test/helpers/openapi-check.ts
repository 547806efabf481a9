import { assertSupportedSchema, type JsonSchema, validate } from '../../src/catalog/schema.js';
import { WebhooksError } from '../../src/errors.js';
import { JWKS_PATHS } from '../../src/http/jwks.js';
import type { openApiDocument } from '../../src/http/openapi.js';
import { splitApiPath } from '../../src/http/router.js';

type Doc = ReturnType<typeof openApiDocument>;

/** One response as seen on the wire. */
export interface SeenResponse {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

/** Which documented operation a response answered (`GET /api/v1/webhooks 200`), or why it has none. */
export interface CheckResult {
  key: string;
  problems: string[];
}

/**
 * Checks a response against the OpenAPI document: the status is declared for the operation, the
 * body is JSON matching the declared schema, and it carries no property the document does not
 * declare (objects with `properties` are checked as closed). Requests to no documented path must
 * get a 404, and undocumented methods a 405 whose `allow` lists exactly the documented ones; both
 * with the shared ErrorResponse body. Used by the test-suite on every response it sees.
 *
 * @example
 * ```ts
 * const { problems } = checkResponse(openApiDocument(), { method: 'GET', url, status: res.status, headers: res.headers, body: await res.text() });
 * ```
 */
export function checkResponse(doc: Doc, seen: SeenResponse): CheckResult {
  const problems: string[] = [];
  const template = documentedPath(doc, new URL(seen.url).pathname.replace(/\/$/, ''));
  const errorSchema = doc.components.schemas.ErrorResponse;
  if (!template) {
    if (seen.status !== 404) problems.push(`undocumented path answered ${seen.status}, not 404`);
    checkJson(doc, errorSchema, seen, problems);
    return { key: `(no route) ${seen.status}`, problems };
  }
  const item = (doc.paths as Record<string, Record<string, any>>)[template]!;
  // Methods are case-sensitive: `patch` is not PATCH (fetch upper-cases only the classic six).
  const op = seen.method === seen.method.toUpperCase() ? item[seen.method.toLowerCase()] : undefined;
  if (!op) {
    const allowed = Object.keys(item)
      .map((m) => m.toUpperCase())
      .sort()
      .join(', ');
    const allow = (seen.headers.get('allow') ?? '')
      .split(',')
      .map((s) => s.trim())
      .sort()
      .join(', ');
    if (seen.status !== 405) problems.push(`undocumented method ${seen.method} answered ${seen.status}, not 405`);
    else if (allow !== allowed) problems.push(`allow is "${allow}", the document says "${allowed}"`);
    checkJson(doc, errorSchema, seen, problems);
    return { key: `(wrong method) ${template} ${seen.status}`, problems };
  }
  const key = `${seen.method} ${template} ${seen.status}`;
  const declared = op.responses[String(seen.status)];
  if (!declared) return { key, problems: [`status ${seen.status} is not declared`] };
  const response = deref(doc, declared) as { content?: Record<string, { schema: unknown }> };
  const schema = response.content?.['application/json']?.schema;
  if (schema === undefined) {
    if (seen.body !== '') problems.push('a body was sent where none is declared');
  } else {
    checkJson(doc, schema, seen, problems);
  }
  return { key, problems };
}

function checkJson(doc: Doc, schema: unknown, seen: SeenResponse, problems: string[]): void {
  if (!(seen.headers.get('content-type') ?? '').startsWith('application/json'))
    problems.push(`content-type is ${seen.headers.get('content-type')}`);
  let body: unknown;
  try {
    body = JSON.parse(seen.body);
  } catch {
    problems.push('body is not JSON');
    return;
  }
  const closed = close(deref(doc, schema));
  assertSupportedSchema(closed);
  try {
    validate(closed, body, 'body');
  } catch (error) {
    problems.push(error instanceof WebhooksError ? error.message : String(error));
  }
}

/** Matches a request path to a documented path template, the way the router does. */
function documentedPath(doc: Doc, pathname: string): string | null {
  if (pathname.includes('//')) return null; // an empty segment names no route
  const jwks = JWKS_PATHS.find((p) => pathname.endsWith(p));
  if (jwks) return jwks;
  const api = splitApiPath(pathname);
  if (!api) return null;
  for (const template of Object.keys(doc.paths)) {
    const t = template.split('/').slice(3); // after '', 'api', 'v1'
    if (!template.startsWith('/api/v1/') || t.length !== api.rest.length) continue;
    if (t.every((s, i) => (s.startsWith('{') ? api.rest[i] !== '' : s === api.rest[i]))) return template;
  }
  return null;
}

/** Inlines every `$ref` (local refs only; the document has no cycles). */
function deref(doc: Doc, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => deref(doc, n));
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as { $ref?: string }).$ref;
  if (typeof ref === 'string') {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<any>((at, key) => at?.[key], doc);
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    return deref(doc, target);
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(doc, v)]));
}

/** Treats every object schema that lists its properties as closed, so undocumented fields fail. */
function close(schema: unknown): JsonSchema {
  if (Array.isArray(schema)) return schema.map(close) as unknown as JsonSchema;
  if (typeof schema !== 'object' || schema === null) return schema as JsonSchema;
  const out: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, close(s)]))
        : k === 'enum' || k === 'const' || k === 'examples'
          ? v
          : close(v),
    ]),
  );
  if (out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out as JsonSchema;
}
