import { describe, expect, test } from 'vitest';
// Plain browser JavaScript with no DOM use, so Node can import it as it is served (typed under
// tsconfig.dashboard.json, not here).
// @ts-expect-error: a .js asset, typed only under checkJs
import * as words from '../../src/dashboard/assets/words.js';
// @ts-expect-error: a .js asset
import de from '../../src/dashboard/assets/words-de.js';
// @ts-expect-error: a .js asset
import fr from '../../src/dashboard/assets/words-fr.js';
import { LOCALES } from '../../src/dashboard/look.js';

/**
 * Every locale's table has every key of English (words.js): its UI strings, the words for every
 * error code and every delivery status, and the `{name}` placeholders of each string. A key added
 * to English without its translations fails here.
 */

type Table = { ui: Record<string, string>; errors: Record<string, string>; statuses: Record<string, string> };
const tables: Record<string, Table> = { fr, de };
const english = {
  ui: words.UI as Record<string, string>,
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
});
