/**
 * Mounting the webhooks API in Fastify 5 under `/auth`. Inside the plugin, bodies are left
 * unread (the handler reads and bounds them itself) and the reply is hijacked so the handler
 * writes the raw response.
 *
 * @example
 * ```ts
 * const app = await createFastifyApp(hooks.handler);
 * await app.listen({ port: 3000 });
 * ```
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { toNodeHandler } from '../../src/http/index.js'; // 'identity-webhooks/http' in a host

export async function createFastifyApp(handler: (request: Request) => Promise<Response>): Promise<FastifyInstance> {
  const app = Fastify();
  const webhooks = toNodeHandler(handler);
  await app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      scope.all('/*', async (request, reply) => {
        reply.hijack();
        await webhooks(request.raw, reply.raw);
      });
    },
    { prefix: '/auth' },
  );
  app.get('/health', async () => ({ ok: true })); // the host's own routes
  return app;
}
