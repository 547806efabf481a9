/**
 * Mounting the webhooks API in Hono under `/auth`: the handler is already `(Request) => Response`,
 * so one route hands it the raw request. Runs unchanged on Node (`@hono/node-server`), Bun, Deno.
 *
 * @example
 * ```ts
 * import { serve } from '@hono/node-server';
 * serve({ fetch: createHonoApp(hooks.handler).fetch, port: 3000 });
 * ```
 */
import { Hono } from 'hono';

export function createHonoApp(handler: (request: Request) => Promise<Response>): Hono {
  const app = new Hono();
  app.all('/auth/*', (c) => handler(c.req.raw));
  app.get('/health', (c) => c.json({ ok: true })); // the host's own routes
  return app;
}
