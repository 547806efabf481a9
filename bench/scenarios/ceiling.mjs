// The ceiling: RS256 signatures per second on every core, the way the engine signs (WebCrypto
// RSASSA-PKCS1-v1_5 / SHA-256, which Node runs on the libuv threadpool), over a signing input
// of the same size as a delivery's token. Nothing else runs in this process: no engine can do
// better than this with one signature per token.
import { createPrivateKey, sign as signSync } from 'node:crypto';
import { EVENT_DATA, EVENT_TYPE, ISSUER, signingKey } from '../lib/engine.mjs';

const b64url = (s) => Buffer.from(s).toString('base64url');

export default async function ceiling({ seconds, runs, concurrency }) {
  const jwk = await signingKey();
  const key = await crypto.subtle.importKey(
    'jwk',
    { ...jwk, alg: undefined, use: undefined, kid: undefined },
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  // The same header and claims a delivery carries (see src/signing/token.ts).
  const now = Date.now();
  const header = { alg: 'RS256', kid: jwk.kid, typ: 'JWT' };
  const claims = {
    type: EVENT_TYPE,
    event_id: `event_${'0'.repeat(32)}`,
    event_timestamp: new Date(now).toISOString(),
    timestamp: new Date(now).toISOString(),
    source: 'admin',
    data: EVENT_DATA,
    iss: ISSUER,
    iat: Math.floor(now / 1000),
  };
  const input = new TextEncoder().encode(`${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`);

  const out = { signaturesPerSec: [], oneCoreSyncPerSec: [], inputBytes: [input.length] };
  for (let run = 0; run < runs; run++) {
    // Enough calls in flight to keep every threadpool thread busy.
    let count = 0;
    const until = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, input);
          count++;
        }
      }),
    );
    out.signaturesPerSec.push(count / ((performance.now() - t0) / 1000));
  }
  // For reference: one core, synchronous (what a signer on the main thread would get).
  const pem = createPrivateKey({ key: jwk, format: 'jwk' });
  for (let run = 0; run < runs; run++) {
    let count = 0;
    const until = performance.now() + (seconds * 1000) / 2;
    const t0 = performance.now();
    while (performance.now() < until) {
      signSync('sha256', input, pem);
      count++;
    }
    out.oneCoreSyncPerSec.push(count / ((performance.now() - t0) / 1000));
  }
  return { metrics: out };
}
