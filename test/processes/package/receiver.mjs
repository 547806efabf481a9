// An account holder's receiver that installs the package only for identity-webhooks/receiver: a plain
// node:http server on 127.0.0.1 that verifies each delivery against ISSUER's key set and prints
// what it verified as one JSON line.
import { createServer } from 'node:http';
import { createReceiver, createVerifier } from 'identity-webhooks/receiver';

const say = (line) => console.log(JSON.stringify(line));
const receive = createReceiver({
  verifier: createVerifier({ issuer: process.env.ISSUER }),
  on: {
    'user.created': (event, { webhookId }) => say({ step: 'verified', webhookId, event }),
  },
  onError: (error) => console.error('receiver error:', error),
});

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const response = await receive(
    new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: { 'content-type': req.headers['content-type'] ?? '', 'webhook-id': String(req.headers['webhook-id'] ?? '') },
      body: Buffer.concat(chunks).toString('utf8'),
    }),
  );
  res.writeHead(response.status, { 'content-type': 'application/json' }).end(await response.text());
});
server.listen(0, '127.0.0.1', () => say({ step: 'listening', url: `http://127.0.0.1:${server.address().port}/webhooks` }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
