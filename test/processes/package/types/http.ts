// identity-webhooks/http: needs @types/node only.
import { createServer } from 'node:http';
import { errorResponse, toNodeHandler } from 'identity-webhooks/http';

export const server = createServer(
  toNodeHandler(async () => errorResponse(429, 'TOO_MANY_REQUESTS', 'slow down', { 'retry-after': '10' })),
);
