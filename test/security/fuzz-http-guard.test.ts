import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { classifyAddress } from '../../src/delivery/guard/address.js';
import type { Resolver } from '../../src/delivery/guard/guard.js';
import { client, createBody, makeHttpEngine, type TestEngine } from '../http/setup.js';

// Property-based tests over HTTP with the network guard ON (test/http/fuzz.test.ts runs with it
// off): generated endpoints, many of them hostile, through POST and PATCH. Never a 500; a refused
// endpoint is a 400 that changes nothing; an accepted one never names a non-public address.

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** Resolves `*.internal` to private space, `*.meta` to the metadata address, the rest to public. */
const resolver: Resolver = async (host) => {
  if (host.endsWith('.internal')) return [{ address: '192.168.10.10', family: 4 }];
  if (host.endsWith('.meta')) return [{ address: '::ffff:169.254.169.254', family: 6 }];
  if (host.startsWith('nx.')) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  return [{ address: '93.184.215.14', family: 4 }];
};

const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.oneof(
  fc.tuple(octet, octet, octet, octet).map((o) => o.join('.')),
  fc.constantFrom('127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '8.8.8.8'),
);
const ipv6 = fc.oneof(
  fc.ipV6(),
  fc.constantFrom('::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '2606:4700::1111'),
  ipv4.map((a) => `::ffff:${a}`),
  ipv4.map((a) => `64:ff9b::${a}`),
);
const host = fc.oneof(
  ipv4,
  ipv6.map((a) => `[${a}]`),
  fc.domain(),
  fc.domain().map((d) => `${d}.internal`),
  fc.domain().map((d) => `${d}.meta`),
  fc.domain().map((d) => `nx.${d}`),
  fc.constantFrom('localhost', '0', '0x7f.1', '2130706433', '0177.0.0.1', '127.1', '[::ffff:7f00:1]', 'LOCALHOST.', '☃.example'),
);
const endpoint = fc
  .tuple(
    fc.constantFrom('http', 'https', 'ftp', 'file', 'gopher', 'HTTP'),
    host,
    fc.option(fc.integer({ min: 1, max: 65535 })),
    fc.webPath(),
  )
  .map(([scheme, h, port, path]) => `${scheme}://${h}${port === null ? '' : `:${port}`}${path}`);

let engine: TestEngine;
let existing: string;
const seen = new Set<number>();
beforeAll(async () => {
  engine = await makeHttpEngine({ allowPrivateNetworks: false, resolver });
  existing = (await client(engine.handler, null)('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id;
});
afterAll(async () => {
  expect([...seen]).toEqual(expect.arrayContaining([200, 400]));
  await engine.close();
});

/** The host of a stored endpoint, as an address when it is one. */
function literalCategory(stored: string): string | null {
  const c = classifyAddress(new URL(stored).hostname);
  return c.category === 'invalid' ? null : c.category;
}

test(
  `POST and PATCH with ${RUNS} generated endpoints: never a 500; refused ones change nothing`,
  async () => {
    const api = client(engine.handler, null);
    const snapshot = async () => JSON.stringify(await engine.hooks.webhooks.list({ environment: 'env-a' }));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('POST', 'PATCH'), endpoint, async (method, url) => {
        const before = await snapshot();
        const path = method === 'POST' ? '/api/v1/webhooks' : `/api/v1/webhooks/${existing}`;
        const res = await api(method, path, { body: method === 'POST' ? createBody({ endpoint: url }) : { endpoint: url } });
        seen.add(res.status);
        expect([200, 400]).toContain(res.status);
        if (res.status === 400) {
          expect(res.json.errors[0].code).toMatch(/^(ENDPOINT_NOT_ALLOWED|INVALID_ENDPOINT)$/);
          expect(await snapshot()).toBe(before);
          return;
        }
        const stored = (await engine.hooks.webhooks.list({ environment: 'env-a' })).find((w) => w.endpoint === new URL(url).href);
        expect(stored).toBeDefined();
        expect(['http:', 'https:']).toContain(new URL(stored!.endpoint).protocol);
        expect(literalCategory(stored!.endpoint) ?? 'public').toBe('public');
        expect(new URL(stored!.endpoint).hostname).not.toMatch(/\.(internal|meta)$|^localhost$/);
      }),
      { numRuns: RUNS },
    );
    expect(engine.logged).toEqual([]);
  },
  30_000 + RUNS * 40,
);
