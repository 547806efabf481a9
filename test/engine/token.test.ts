import { compactVerify, importJWK, SignJWT } from 'jose';
import { expect, test } from 'vitest';
import { generateSigningKey, importSigningKey, toPublicJwk } from '../../src/signing/keys.js';
import { buildClaims, signClaims } from '../../src/signing/token.js';

// The token is written out by hand (src/signing/token.ts) rather than through jose's SignJWT.
// RSASSA-PKCS1-v1_5 is deterministic, so the same claims and key must give jose's token byte
// for byte: header, claims and signature.

const event = {
  id: 'event_0123456789abcdefghijklmn',
  type: 'user.created',
  source: 'admin',
  eventTimestamp: Date.UTC(2026, 10, 26, 12, 0, 0, 123),
  environment: 'production',
  data: {
    user: { id: 'kp_1', email: 'ünïcødé@example.com', first_name: 'A "quoted" name', organizations: [{ code: 'org_1', roles: [] }] },
  },
  createdAt: 0,
};

test('signClaims gives exactly the token jose SignJWT gives for the same claims and key', async () => {
  const key = await generateSigningKey({ kid: 'kid-1' });
  const imported = await importSigningKey(key);
  for (const now of [Date.UTC(2026, 0, 1), Date.UTC(2026, 10, 26, 13, 59, 59, 999)]) {
    const claims = buildClaims(event as never, 'https://auth.example.com', now);
    const ours = await signClaims(claims, imported);
    const theirs = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'kid-1', typ: 'JWT' }).sign(imported.key);
    expect(ours).toBe(theirs);
    const verified = await compactVerify(ours, await importJWK({ ...toPublicJwk(key) }, 'RS256'));
    expect(verified.protectedHeader).toEqual({ alg: 'RS256', kid: 'kid-1', typ: 'JWT' });
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(claims);
  }
});

test('a token signed with one key does not verify with another', async () => {
  const [a, b] = await Promise.all([generateSigningKey({ kid: 'a' }), generateSigningKey({ kid: 'b' })]);
  const token = await signClaims(buildClaims(event as never, 'https://auth.example.com', Date.now()), await importSigningKey(a));
  await expect(compactVerify(token, await importJWK({ ...toPublicJwk(b) }, 'RS256'))).rejects.toThrow(/signature verification failed/);
});
