import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { description, name } from '../../src/validate.js';

// Name and description validation: they are shown to people, so text that displays as
// something other than what is stored is refused (bidi controls, C0/C1 controls, U+2028/U+2029,
// tag characters, text with nothing visible), while real text in any script keeps working.

type Field = typeof name | typeof description;
const fields: Array<[string, Field]> = [
  ['name', name],
  ['description', description],
];

function refusal(fn: Field, value: string): ValidationError | null {
  try {
    fn(value);
    return null;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error;
  }
}

describe('legitimate text in any script is accepted and stored exactly', () => {
  test.each([
    'Café crème, naïve façade',
    '数据同步 / データ同期 / 데이터 동기화',
    'Sync 👩‍💻 done ✅', // 👩‍💻 holds U+200D ZERO WIDTH JOINER inside visible text
    '👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, ❤️ (with U+FE0F)',
    '🇫🇷 and 🏴󠁧󠁢󠁳󠁣󠁴󠁿 (Scotland: a flag made of tag characters)',
    'مزامنة العملاء',
    'סנכרון לקוחות',
    'می‌خواهم', // Persian, with U+200C ZERO WIDTH NON-JOINER between letters
    'क्षत्रिय', // Devanagari conjuncts
    'Zalgo: Z̸̡̢̛̗̘̙̜̝̞̟̠',
    'non\u00a0breaking and soft\u00adhyphen inside words',
  ])('%s', (text) => {
    expect(name(text)).toBe(text);
    expect(description(text)).toBe(text);
  });

  test('descriptions keep tab, line feed and CRLF', () => {
    for (const text of ['line one\nline two', 'a\tb', 'Windows\r\nline breaks\r\n']) expect(description(text)).toBe(text);
  });
});

describe('text that displays as something else is refused, naming the field and the character', () => {
  test.each([
    ['invoice\u202egpj.exe', 'U+202E RIGHT-TO-LEFT OVERRIDE (character 8): bidirectional controls'],
    ['a\u2066b', 'U+2066 LEFT-TO-RIGHT ISOLATE (character 2)'],
    ['\u200eabc', 'U+200E LEFT-TO-RIGHT MARK (character 1)'],
    ['abc\u061c', 'U+061C ARABIC LETTER MARK (character 4)'],
    ['red \u001b[31malert', 'U+001B ESCAPE (character 5)'],
    ['c1 \u009b31m', 'U+009B CONTROL SEQUENCE INTRODUCER (character 4)'],
    ['next\u0085line', 'U+0085 NEXT LINE (character 5)'],
    ['one\u2028two', 'U+2028 LINE SEPARATOR (character 4)'],
    ['one\u2029two', 'U+2029 PARAGRAPH SEPARATOR (character 4)'],
    ['nul\u0000', 'U+0000 NULL (character 4)'],
    ['del\u007f', 'U+007F DELETE (character 4)'],
    ['hi\u{e0041}\u{e0042}', 'U+E0041 (character 3): tag characters'],
    ['🏴\u{e0067}\u{e0062}', 'U+E0067 (character 2)'], // tags without the CANCEL TAG that ends a flag
    ['lone\rreturn', 'U+000D CARRIAGE RETURN (character 5)'],
  ])('%j', (text, expected) => {
    for (const [field, fn] of fields) {
      const error = refusal(fn, text);
      expect(error, `${field} accepted ${JSON.stringify(text)}`).not.toBeNull();
      expect(error!.field).toBe(field);
      expect(error!.code).toBe('ERR_VALIDATION');
      expect(error!.message).toContain(`${field} must not contain ${expected}`);
    }
  });

  test('names are one line: tab and line feed are refused there (after trimming the ends)', () => {
    expect(refusal(name, 'a\tb')?.message).toContain('U+0009 CHARACTER TABULATION (character 2): names are one line');
    expect(refusal(name, 'a\nb')?.message).toContain('U+000A LINE FEED (character 2)');
    expect(name('  padded\n')).toBe('padded');
  });

  test.each([
    ['\u200b', 'U+200B ZERO WIDTH SPACE'],
    ['\u200b\u200c\u200d\u2060\ufeff\u00ad', 'U+200B ZERO WIDTH SPACE'],
    ['\u3164', 'U+3164 HANGUL FILLER'],
    ['\u2800\u2800', 'U+2800 BRAILLE PATTERN BLANK'],
    ['\ufe0f\u034f', 'U+FE0F'],
    ['\u200b\u00a0\u3000 ', 'U+200B ZERO WIDTH SPACE'],
  ])('nothing visible: %j', (text, first) => {
    for (const [field, fn] of fields) {
      expect(refusal(fn, text)?.message).toBe(
        `${field} must contain visible text: it has only spaces or invisible characters (the first is ${first})`,
      );
    }
  });

  test('whitespace-only: a name is "empty" once trimmed; a description is refused too, while "" still clears it', () => {
    expect(refusal(name, ' \t ')?.message).toBe('name must not be empty');
    expect(refusal(description, ' \n\t')?.message).toMatch(/^description must contain visible text/);
    expect(description('')).toBeNull();
  });
});

/**
 * Every code point, grouped by general category (one scan, ~0.5 s), so the property below can
 * draw strings from each category, however rare (Zl and Zp have one code point each).
 */
const CATEGORIES = [
  'Lu',
  'Ll',
  'Lt',
  'Lm',
  'Lo',
  'Mn',
  'Mc',
  'Me',
  'Nd',
  'Nl',
  'No',
  'Pc',
  'Pd',
  'Ps',
  'Pe',
  'Pi',
  'Pf',
  'Po',
  'Sm',
  'Sc',
  'Sk',
  'So',
  'Zs',
  'Zl',
  'Zp',
  'Cc',
  'Cf',
  'Cs',
  'Co',
  'Cn',
] as const;
type Category = (typeof CATEGORIES)[number];
const byCategory = new Map<Category, number[]>(CATEGORIES.map((c) => [c, []]));
const anyCategory = new RegExp(CATEGORIES.map((c) => `(?<${c}>\\p{gc=${c}})`).join('|'), 'u');
for (let cp = 0; cp <= 0x10ffff; cp++) {
  const groups = anyCategory.exec(String.fromCodePoint(cp))!.groups!;
  byCategory.get(CATEGORIES.find((c) => groups[c] !== undefined)!)!.push(cp);
}

// The oracle, written from the rule's wording rather than from the code: refused exactly when the
// text (a name trimmed first) holds a control (tab, LF and CRLF allowed in descriptions), a bidi
// control, U+2028/U+2029, a lone surrogate or a tag outside an emoji flag, or has nothing visible.
function expected(field: string, input: string): 'accept' | 'refuse' {
  const s = field === 'name' ? input.trim() : input;
  const controls = field === 'name' ? /\p{Cc}/u : /(?![\t\n\r])\p{Cc}|\r(?!\n)/u;
  const tagsOutsideFlags = /[\u{e0000}-\u{e007f}]/u.test(s.replace(/\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}/gu, ''));
  const nothingVisible = s.replace(/[\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/gu, '') === '';
  if (field === 'description' && s === '') return 'accept'; // "" clears a description
  const bad = controls.test(s) || /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u.test(s) || /\p{Cs}/u.test(s);
  return bad || tagsOutsideFlags || nothingVisible ? 'refuse' : 'accept';
}

describe('property: strings drawn from each Unicode category are accepted or refused by the rule, never crash, and accepted ones round-trip', () => {
  const runs = Number(process.env.FUZZ_RUNS ?? 300);
  test.each(CATEGORIES)('%s', (category) => {
    const cps = byCategory.get(category)!;
    const char = fc.noBias(fc.integer({ min: 0, max: cps.length - 1 })).map((i) => String.fromCodePoint(cps[i]!));
    const run = fc.array(char, { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
    // Alone, and inside visible text: "nothing visible" and "refused character" are both reached.
    const around = fc.tuple(fc.constantFrom('a', 'Ж', '名', 'ب', '👩‍💻', ' x'), run, fc.constantFrom('', 'z', ' 1', '\n2'));
    const value = fc.oneof(
      run,
      around.map((p) => p.join('')),
    );
    const outcomes = { accept: 0, refuse: 0 };
    const check = (s: string, [field, fn]: [string, Field]) => {
      const want = expected(field, s);
      outcomes[want]++;
      let out: string | null;
      try {
        out = fn(s);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError); // never a crash, never another error type
        expect((error as ValidationError).field).toBe(field);
        const named = /U\+([0-9A-F]{4,6})/.exec((error as Error).message);
        if (named) expect(s).toContain(String.fromCodePoint(Number.parseInt(named[1]!, 16))); // it names a character that is there
        expect(want, `refused ${JSON.stringify(s)} as ${field}: ${(error as Error).message}`).toBe('refuse');
        return;
      }
      expect(want, `accepted ${JSON.stringify(s)} as ${field}`).toBe('accept');
      expect(out).toBe(field === 'name' ? s.trim() : s === '' ? null : s);
      if (out !== null) expect(fn(out)).toBe(out); // what is stored validates to itself
    };
    fc.assert(fc.property(value, fc.constantFrom(...fields), check), { numRuns: runs });
    // Sampling rarely isolates one code point of a category; in the smaller categories (all the
    // controls, format characters and separators) every code point is tried alone and in text.
    if (cps.length <= 5000) {
      for (const cp of cps)
        for (const text of [String.fromCodePoint(cp), `a${String.fromCodePoint(cp)}z`]) for (const f of fields) check(text, f);
    }
    // The generators reach the outcomes the rule has for the category (not a vacuous pass).
    if (/^[LNPS]|^M/.test(category)) expect(outcomes.accept).toBeGreaterThan(0);
    if (/^(Cc|Cs|Zl|Zp)$/.test(category)) expect(outcomes.refuse).toBeGreaterThan(0);
  });
});
