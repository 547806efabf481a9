import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { BUILTIN_EVENT_TYPES } from '../../src/catalog/builtins.js';
// Plain browser JavaScript with no DOM use, so Node can import it as it is served (typed under
// tsconfig.dashboard.json, not here).
// @ts-expect-error: a .js asset, typed only under checkJs
import * as words from '../../src/dashboard/assets/words.js';
// @ts-expect-error: a .js asset
import de from '../../src/dashboard/assets/words-de.js';
// @ts-expect-error: a .js asset
import en from '../../src/dashboard/assets/words-en.js';
// @ts-expect-error: a .js asset
import fr from '../../src/dashboard/assets/words-fr.js';
import { LOCALES } from '../../src/dashboard/look.js';

/**
 * Every locale's table has every key of English (words-en.js's UI strings, words.js's words for
 * every error code and every delivery status), and the `{name}` placeholders of each string. A
 * key added to English without its translations fails here; so does a key no view uses.
 */

type Table = { ui: Record<string, string>; errors: Record<string, string>; statuses: Record<string, string> };
const tables: Record<string, Table> = { fr, de };
const english = {
  ui: en.ui as Record<string, string>,
  errors: Object.fromEntries(Object.entries(words.ERROR_WORDS as Record<string, [string | null, string]>).map(([k, v]) => [k, v[1]])),
  statuses: { ...(words.DELIVERY_STATUS as Record<string, string>) },
};
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('locales', () => {
  test('the server and the page speak the same locales', () => {
    expect([...LOCALES]).toEqual(words.LOCALES);
    expect(Object.keys(tables).sort()).toEqual(LOCALES.filter((l) => l !== 'en').sort());
  });

  describe.each(Object.entries(tables))('%s', (_locale, table) => {
    test.each(['ui', 'errors', 'statuses'] as const)('%s: every English key, no other, with the same placeholders', (part) => {
      expect(Object.keys(table[part]).sort()).toEqual(Object.keys(english[part]).sort());
      for (const [key, text] of Object.entries(english[part])) {
        expect(placeholders(table[part][key]!), `${part}.${key}`).toEqual(placeholders(text));
        expect(table[part][key], `${part}.${key}`).not.toBe('');
      }
    });
  });

  test('useLocale picks a table by language, falls back to English, and t fills in values', async () => {
    expect(await words.useLocale('fr-CA')).toBe('fr');
    expect(words.t('catalog.count', { count: 3 })).toBe('3 types d’événements');
    expect(words.DELIVERY_STATUS.delivered).toBe('Livrée');
    expect(words.explain({ status: 404, code: 'WEBHOOK_NOT_FOUND' }).text).toBe(fr.errors.WEBHOOK_NOT_FOUND);
    expect(await words.useLocale('de')).toBe('de');
    expect(words.t('nav.catalog')).toBe('Ereigniskatalog');
    expect(words.formatNumber(1234.5)).toBe('1.234,5');
    expect(await words.useLocale('ja')).toBe('en');
    expect(words.t('nav.catalog')).toBe('Event catalog');
    expect(words.DELIVERY_STATUS.delivered).toBe('Delivered');
    expect(words.formatNumber(1234.5)).toBe('1,234.5');
  });

  test('plurals by the locale’s rules, numbers, percentages and durations in its digits', async () => {
    await words.useLocale('en');
    expect([0, 1, 2, 1200].map((n) => words.plural(n, 'count.attempts'))).toEqual([
      '0 attempts',
      '1 attempt',
      '2 attempts',
      '1,200 attempts',
    ]);
    expect(words.formatPercent(0.5)).toBe('50%');
    expect(words.formatPercent(null)).toBe('–');
    expect(words.formatMs(1500)).toBe('1,500 ms');
    await words.useLocale('fr');
    // French counts 0 as one; its group separator and the space before % are no-break spaces.
    expect([0, 1, 2].map((n) => words.plural(n, 'count.attempts'))).toEqual(['0 tentative', '1 tentative', '2 tentatives']);
    expect(words.plural(3, 'count.recovered')).toBe('3 livraisons échouées remises en file d’attente.');
    expect(words.formatPercent(0.995).replace(/\s/g, ' ')).toBe('99,5 %');
    expect(words.formatMs(1500).replace(/\s/g, ' ')).toBe('1 500 ms');
    await words.useLocale('de');
    expect([0, 1, 2].map((n) => words.plural(n, 'count.attempts'))).toEqual(['0 Versuche', '1 Versuch', '2 Versuche']);
    expect(words.formatMs(1500)).toBe('1.500 ms');
    await words.useLocale('en');
  });

  test('tParts fills placeholders with values as they are (nodes stay nodes), in the locale’s order', async () => {
    const node = { a: 'node' };
    await words.useLocale('de');
    expect(words.tParts('message.ids', { delivery: node, event: 'e' })).toEqual([
      'Zustellungs-ID (webhook-id) ',
      node,
      ' · Ereignis ',
      'e',
      '',
    ]);
    await words.useLocale('en');
    expect(words.tParts('message.ids', { delivery: node, event: 'e' })).toEqual(['Delivery id (webhook-id) ', node, ' · event ', 'e', '']);
  });

  test('the built-in event types have their names in every table, as the catalog says them in English', async () => {
    const names = Object.fromEntries(BUILTIN_EVENT_TYPES.map((type) => [`event.${type.code}`, type.name]));
    expect(Object.fromEntries(Object.entries(english.ui).filter(([key]) => key.startsWith('event.')))).toEqual(names);
    const resources = [...new Set(BUILTIN_EVENT_TYPES.map((type) => `resource.${type.code.split('.')[0]}`))].sort();
    expect(
      Object.keys(english.ui)
        .filter((key) => key.startsWith('resource.'))
        .sort(),
    ).toEqual(resources);
    await words.useLocale('fr');
    expect(words.eventName({ code: 'user.created', name: 'User created', origin: 'kinde' })).toBe('Utilisateur créé');
    expect(words.eventName({ code: 'billing.paid', name: 'Invoice paid', origin: 'host' })).toBe('Invoice paid');
    expect(words.resourceLabel('access_request.created')).toBe('Demande d’accès');
    expect(words.resourceLabel('billing_run.done')).toBe('Billing run');
    await words.useLocale('en');
  });

  test('no view writes words of its own: every string literal of a view that reads as words is a key of the tables', () => {
    const dir = new URL('../../src/dashboard/assets/', import.meta.url);
    // Not views: the tables, the API client (its messages are mapped by `explain`), the How to verify programs (code).
    const views = readdirSync(dir).filter((name) => name.endsWith('.js') && !/^(words|api|snippets)\b/.test(name));
    // Technical tokens shown as they are.
    // not words: a header name a field shows as its example, a key's name (KeyboardEvent.key)
    const allowed = new Set(['X-Header-Name', 'Escape']);
    const found: string[] = [];
    for (const name of views) {
      const code = readFileSync(new URL(name, dir), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/(^|\s)\/\/.*$/gm, '$1');
      for (const m of code.matchAll(/(['`])((?:(?!\1)[^\\\n]|\\.)*)\1/g)) {
        const text = m[2]!.replace(/\$\{[^}]*\}/g, '');
        if (Object.hasOwn(english.ui, text) || allowed.has(text)) continue;
        // A class list ("link back", "status status-") or an id is not words; a capital and a lower-case letter, or two words, are.
        if (/^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)*$/.test(text.trim())) continue;
        if (/[A-Z][a-z]|[a-z]{2,} [a-z]{2,}/.test(text)) found.push(`${name}: ${m[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  test('every UI key is used by a view (so the tables carry no dead words)', () => {
    const dir = new URL('../../src/dashboard/assets/', import.meta.url);
    const source = readdirSync(dir)
      .filter((name) => name.endsWith('.js') && !name.startsWith('words-'))
      .map((name) => readFileSync(new URL(name, dir), 'utf8'))
      .join('\n');
    const used = (key: string) => {
      if (source.includes(`'${key}'`)) return true;
      const plural = /^(count\.\w+)\.(one|other)$/.exec(key);
      if (plural) return source.includes(`'${plural[1]}'`);
      // Built from data: a built-in type's name and its resource (words.js eventName, resourceLabel).
      if (/^(event|resource)\./.test(key)) return source.includes(`\`${key.split('.')[0]}.\${`);
      // Built from a constant: the periods (`range.${value}`, PERIODS in delivery-log.js).
      const range = /^range\.(\w+)$/.exec(key);
      return !!range && (source.includes('`range.${') || source.includes(`'${range[1]}'`));
    };
    expect(Object.keys(english.ui).filter((key) => !used(key))).toEqual([]);
  });
});
