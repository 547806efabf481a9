import { API_BASE, type Route } from './routes.js';

export type Match =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  /** The path exists but not with this method. */
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

/**
 * Where the API sits in a request path. The handler may be mounted under any prefix
 * (`/auth/api/v1/webhooks`), so the API starts at the LAST `/api/v1` segment pair: a prefix may
 * itself contain `/api/v1`, while an id never contains a raw `/`.
 */
export function splitApiPath(pathname: string): { prefix: string; rest: string[] } | null {
  const segments = pathname.split('/');
  const base = API_BASE.split('/').slice(1);
  for (let i = segments.length - base.length; i >= 1; i--) {
    if (base.every((s, j) => segments[i + j] === s)) {
      return { prefix: segments.slice(0, i).join('/'), rest: segments.slice(i + base.length) };
    }
  }
  return null;
}

/** Matches the segments after `/api/v1` against the route table. */
export function matchRoute(routes: readonly Route[], method: string, rest: string[]): Match {
  const allow = new Set<string>();
  for (const route of routes) {
    const params = matchTemplate(route.path.slice(API_BASE.length).split('/').slice(1), rest);
    if (!params) continue;
    if (route.method === method) return { kind: 'route', route, params };
    allow.add(route.method);
  }
  return allow.size > 0 ? { kind: 'method', allow: [...allow] } : { kind: 'none' };
}

function matchTemplate(template: string[], rest: string[]): Record<string, string> | null {
  if (template.length !== rest.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const s = rest[i]!;
    if (t.startsWith('{')) {
      if (s.length === 0) return null;
      params[t.slice(1, -1)] = decode(s);
    } else if (t !== s) {
      return null;
    }
  }
  return params;
}

/** A malformed escape cannot name an existing id; keep it raw and let the lookup say "not found". */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
