/**
 * Mounting the webhooks API in Express 5 under `/auth`. Mount it before `express.json()` so the
 * handler reads (and bounds) the body itself; a body Express already parsed is passed on as JSON.
 *
 * @example
 * ```ts
 * createExpressApp(hooks.handler).listen(3000);
 * ```
 */
import express from 'express';
import { toNodeHandler } from '../../src/http/index.js'; // 'identity-webhooks/http' in a host

export function createExpressApp(handler: (request: Request) => Promise<Response>): express.Express {
  const app = express();
  app.use('/auth', toNodeHandler(handler));
  app.use(express.json()); // the host's own routes after it
  app.get('/health', (_req, res) => void res.json({ ok: true }));
  return app;
}
