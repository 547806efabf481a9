import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhooksError } from '../../src/errors.js';
import { createSealer, isSealed, requireSealer } from '../../src/secrets/seal.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32).toString('base64');

describe('sealed secrets', () => {
  it('seals to a text that holds nothing of the secret and opens only for its row', () => {
    const sealer = createSealer(keyA);
    if (sealer === null) throw new Error('expected a sealer');
    const sealed = sealer.seal('Bearer s3cr3t-value', 'webhook_1');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('s3cr3t');
    expect(sealer.seal('Bearer s3cr3t-value', 'webhook_1')).not.toBe(sealed); // a fresh IV each time
    expect(sealer.open(sealed, 'webhook_1')).toBe('Bearer s3cr3t-value');
    expect(() => sealer.open(sealed, 'webhook_2')).toThrow(/copied from another row/);
    const altered = `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(() => sealer.open(altered, 'webhook_1')).toThrow(WebhooksError);
  });

  it('seals under the first key, opens under any, and reseals what an older key sealed', () => {
    const old = createSealer(keyA);
    const both = createSealer([keyB, keyA]);
    if (old === null || both === null) throw new Error('expected sealers');
    const sealedOld = old.seal('x', 'webhook_1');
    expect(both.open(sealedOld, 'webhook_1')).toBe('x');
    expect(both.isStale(sealedOld)).toBe(true);
    const resealed = both.reseal(sealedOld, 'webhook_1');
    expect(both.isStale(resealed)).toBe(false);
    expect(both.reseal(resealed, 'webhook_1')).toBe(resealed);
    expect(() => old.open(resealed, 'webhook_1')).toThrow(/no longer holds/);
  });

  it('refuses keys that are not 32 bytes, and says how to make one', () => {
    expect(() => createSealer(randomBytes(16))).toThrow(/32 bytes \(got 16\).*randomBytes\(32\)/);
    expect(() => createSealer([])).toThrow(TypeError);
    expect(createSealer(undefined)).toBeNull();
    expect(createSealer(randomBytes(32).toString('hex'))).not.toBeNull(); // hex text
  });

  it('without a key, what needs a secret is a typed refusal naming it', () => {
    try {
      requireSealer(null, 'The header "authorization"', 'headers');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(WebhooksError);
      expect((e as WebhooksError).code).toBe('ERR_SECRETS_KEY_REQUIRED');
      expect((e as WebhooksError).field).toBe('headers');
      expect((e as WebhooksError).message).toMatch(/secretsKey/);
    }
  });
});
