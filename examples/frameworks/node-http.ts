/**
 * Mounting the webhooks API on plain `node:http`, under `/auth`, beside the host's own routes.
 *
 * @example
 * ```ts
 * createNodeServer(hooks.handler).listen(3000);
 * ```
 */
import http from 'node:http';
import { toNodeHandler } from '../../src/http/index.js'; // 'identity-webhooks/http' in a host

export function createNodeServer(handler: (request: Request) => Promise<Response>): http.Server {
  const webhooks = toNodeHandler(handler);
  return http.createServer((req, res) => {
    if (req.url?.startsWith('/auth/')) return void webhooks(req, res);
    // ...the host's own routes
    if (req.url === '/health') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    res.writeHead(404).end();
  });
}
