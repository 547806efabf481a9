import { expect, test } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { endpoint, LIMITS } from '../../src/validate.js';

// The endpoint length bound applies to the stored (normalised) form. The
// parser percent-encodes non-ASCII text, so a 2,022-character input became 12,022 stored ones.

const refusal = (value: string) => {
  try {
    endpoint(value);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
};

test('a 2,022-character input that normalises to 12,022 characters is refused, saying why', () => {
  const input = `https://a.example/${'€'.repeat(1250)}${'x'.repeat(2022 - 18 - 1250)}`;
  expect(input.length).toBe(2022);
  expect(new URL(input).href.length).toBe(12_022);
  const error = refusal(input);
  expect(error).toMatchObject({ field: 'endpoint', code: 'ERR_VALIDATION' });
  expect(error!.message).toBe(
    'endpoint must be at most 2048 characters once normalised (it has 12022: non-ASCII characters are percent-encoded)',
  );
});

test('the bound is exact on the normalised form: 2048 stored characters pass, 2049 do not', () => {
  const base = 'https://a.example/';
  const pad = (n: number) => '€'.repeat(n) + 'x'.repeat(LIMITS.endpointLength - base.length - 9 * n); // € is 9 characters stored
  const exact = base + pad(200);
  expect(new URL(exact).href.length).toBe(LIMITS.endpointLength);
  expect(endpoint(exact)).toBe(new URL(exact).href);
  expect(endpoint(endpoint(exact))).toBe(endpoint(exact)); // the stored form validates to itself
  expect(refusal(`${exact}y`)?.message).toMatch(/once normalised \(it has 2049/);
});

test('an input over the bound is refused before it is parsed, even if it would normalise shorter', () => {
  const dots = `https://a.example/${'./'.repeat(LIMITS.endpointLength)}x`;
  expect(new URL(dots).href).toBe('https://a.example/x');
  expect(refusal(dots)?.message).toBe('endpoint must be at most 2048 characters');
});
