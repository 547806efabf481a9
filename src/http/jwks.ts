/** Paths the key set is served at (both spellings are in use in the wild). */
export const JWKS_PATHS = ['/.well-known/jwks', '/.well-known/jwks.json'] as const;

/**
 * `GET /.well-known/jwks`: the public keys, cacheable for five minutes (key rotation keeps a new
 * key published for longer than that before signing with it).
 */
export function jwksResponse(document: { keys: unknown[] }, method: string): Response {
  const headers = {
    'content-type': 'application/json',
    'cache-control': 'public, max-age=300',
    'access-control-allow-origin': '*',
  };
  if (method === 'HEAD') return new Response(null, { status: 200, headers });
  return new Response(JSON.stringify(document), { status: 200, headers });
}
