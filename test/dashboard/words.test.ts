import { beforeAll, describe, expect, test } from 'vitest';
// Plain browser JavaScript with no DOM use, so Node can import it as it is served. Its types are
// checked by tsconfig.dashboard.json; this program does not read JavaScript.
// @ts-expect-error: a .js asset, typed only under checkJs
import { ERROR_WORDS, explain, resourceLabel, useLocale, webhookStatus } from '../../src/dashboard/assets/words.js';
import { HTTP_ERROR_CODES } from '../../src/http/errors.js';

/** What the page says for each status and each error code (the browser tests cover the wiring). */

const at = (iso: string | null) => (iso ? `at ${iso}` : '');
const webhook = (fields: Record<string, unknown>) => ({
  status: 'enabled',
  disabled_reason: null,
  disabled_on: null,
  failing_since: null,
  ...fields,
});

beforeAll(() => useLocale('en'));

describe('statuses', () => {
  test.each([
    [{}, 'enabled', 'Enabled'],
    [{ failing_since: '2026-01-01T00:00:00Z' }, 'warning', 'Enabled, failing since at 2026-01-01T00:00:00Z'],
    [{ status: 'disabled', disabled_reason: 'manual' }, 'disabled', 'Disabled'],
    [
      { status: 'disabled', disabled_reason: 'failing', failing_since: '2026-01-01T00:00:00Z', disabled_on: '2026-01-04T00:00:00Z' },
      'failing',
      'Disabled because failing since at 2026-01-01T00:00:00Z',
    ],
  ])('%j is %s: "%s"', (fields, kind, text) => {
    expect(webhookStatus(webhook(fields), at)).toEqual({ kind, text });
  });
});

describe('errors in plain words, each next to its field', () => {
  test.each([
    ['INVALID_NAME', 'name'],
    ['INVALID_DESCRIPTION', 'description'],
    ['INVALID_ENDPOINT', 'endpoint'],
    ['ENDPOINT_NOT_ALLOWED', 'endpoint'],
    ['INVALID_EVENT_TYPES', 'event_types'],
    ['UNKNOWN_EVENT_TYPE', 'event_types'],
    ['WEBHOOK_LIMIT_REACHED', null],
    ['WEBHOOK_DISABLED', null],
    ['INVALID_CREDENTIALS', null],
    ['CROSS_SITE_REQUEST', null],
  ])('%s → %s', (code, field) => {
    const said = explain({ status: 400, code, message: 'name must not contain control characters (the server’s words)' });
    expect(said.field).toBe(field);
    expect(said.text).not.toMatch(/_|must not contain control/); // no codes, no jargon passed through
  });

  test('a failure on our side, or no answer at all, says so without detail', () => {
    for (const error of [
      { status: 500, code: 'INTERNAL_ERROR', message: 'internal error' },
      { status: 0, code: 'NETWORK', message: '' },
    ]) {
      expect(explain(error).text).toMatch(/^(Something went wrong on our side|Could not reach the server)/);
    }
  });

  test('every code the server answers with has words of its own, not the server’s message', () => {
    const missing = HTTP_ERROR_CODES.filter((code) => !Object.hasOwn(ERROR_WORDS, code));
    expect(missing).toEqual([]);
    for (const code of HTTP_ERROR_CODES) {
      const said = explain({ status: 400, code, message: 'the server’s own words' });
      expect(said.text, code).toBe(ERROR_WORDS[code][1]);
      expect(said.text, code).not.toMatch(/_|server’s own words/);
    }
  });

  test('a code of the host’s own (a 429 in front of the API) keeps the server’s message', () => {
    expect(explain({ status: 429, code: 'TOO_MANY_REQUESTS', message: 'Slow down: try again in a minute.' })).toEqual({
      field: null,
      text: 'Slow down: try again in a minute.',
    });
  });
});

test('resources are named for people', () => {
  expect(resourceLabel('user.created')).toBe('User');
  expect(resourceLabel('access_request.created')).toBe('Access request');
  expect(resourceLabel('billing.invoice_paid')).toBe('Billing');
});

describe('a failing webhook’s last error in plain words (fix-it.js)', () => {
  test.each([
    ['expected HTTP 200, got 301: moved', /answered 301, a redirect\. Webhooks do not follow redirects/],
    ['expected HTTP 200, got 500: <html><body>database is down</body></html>', /^Your endpoint answered HTTP 500\. Only HTTP 200/],
    ['timeout: no complete answer within 10000 ms', /^Your endpoint did not answer within 10 seconds\.$/],
    ['timeout: no complete answer within 2500 ms', /within 2\.5 seconds/],
    [
      'network: DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate',
      /^The secure connection \(TLS\) to your endpoint failed: DEPTH_ZERO_SELF_SIGNED_CERT/,
    ],
    ['network: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', /^Could not connect to your endpoint: ECONNREFUSED/],
    ['dns: could not resolve host (ENOTFOUND)', /host name of your endpoint could not be found/],
    ['blocked: 10.0.0.1 is a private address', /not allowed \(a private network address\)/],
    ['something new', /^something new$/],
  ])('%s', async (error, said) => {
    // @ts-expect-error: a .js asset, typed only under checkJs
    const { plainError } = await import('../../src/dashboard/assets/fix-it.js');
    expect(plainError(error)).toMatch(said);
  });
});
