import { describe, expect, test } from 'vitest';
import { localeFor, lookOf } from '../../src/dashboard/look.js';

/** The host's theme and locale options, checked at creation; the locale a request gets. */
describe('dashboard look', () => {
  const request = (acceptLanguage?: string) =>
    new Request('https://x.example/w', { headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {} });

  test('Accept-Language: the best-ranked language we speak, else English; a fixed locale wins', () => {
    const auto = lookOf(undefined, undefined);
    expect(localeFor(auto, request())).toBe('en');
    expect(localeFor(auto, request('de-CH, fr;q=0.9'))).toBe('de');
    expect(localeFor(auto, request('ja, fr;q=0.5, de;q=0.7'))).toBe('de');
    expect(localeFor(auto, request('fr;q=0, de;q=0.1'))).toBe('de');
    expect(localeFor(auto, request('*'))).toBe('en');
    expect(localeFor(lookOf(undefined, 'fr'), request('de'))).toBe('fr');
  });

  test('a theme is checked: colours, logo addresses, modes; an https logo is allowed by the page’s img-src', () => {
    expect(lookOf({ name: ' Acme ', accent: '#6b3fd4', mode: 'dark', logo: '/logo.svg' }, undefined)).toMatchObject({
      theme: { name: 'Acme', accent: '#6b3fd4', mode: 'dark', logo: '/logo.svg' },
      logoOrigin: null,
    });
    expect(lookOf({ logo: 'https://cdn.acme.example/logo.svg' }, undefined).logoOrigin).toBe('https://cdn.acme.example');
    for (const bad of [
      { accent: 'red; background: url(x)' },
      { accent: 'expression(alert(1))' },
      { logo: 'javascript:alert(1)' },
      { logo: 'http://cdn.example/logo.svg' },
      { logo: '//cdn.example/logo.svg' },
      { mode: 'sepia' },
      { name: '' },
    ]) {
      expect(() => lookOf(bad as never, undefined), JSON.stringify(bad)).toThrow(TypeError);
    }
    expect(() => lookOf(undefined, 'xx')).toThrow(TypeError);
  });
});

describe('the page with a theme', () => {
  test('name, logo, accent, forced mode and locale reach the page; an https logo’s origin is in img-src', async () => {
    const { createDashboard } = await import('../../src/dashboard/index.js');
    const dashboard = createDashboard({
      api: async () => new Response('{}'),
      authorize: () => ({ environment: 'env-a' }),
      onError: () => {},
      theme: { name: 'Acme <Corp>', logo: 'https://cdn.acme.example/logo.svg', accent: '#6b3fd4', mode: 'dark' },
      locale: 'de',
    });
    const res = await dashboard(new Request('https://auth.example.com/w'));
    const html = await res.text();
    expect(res.headers.get('content-security-policy')).toContain("img-src 'self' https://cdn.acme.example;");
    expect(html).toContain('<html lang="de" data-theme="dark">');
    expect(html).toContain('<title>Webhooks · Acme &#60;Corp&#62;</title>');
    expect(html).toContain('<img class="logo" src="https://cdn.acme.example/logo.svg" alt="" height="28"> Acme &#60;Corp&#62;</h1>');
    expect(html).toContain('locale="de" theme="dark" accent="#6b3fd4"');
  });
});
