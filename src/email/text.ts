/**
 * Text helpers for the disable email: everything that came from a record (a webhook's name, its
 * last error) is treated as hostile here, whatever validation it passed on the way in, because a
 * row can be older than the rules or written by hand.
 */

// Control, format (bidi overrides, zero-width) and line/paragraph separators: any of them in a
// header could end the line or reorder what the reader sees; in a one-line body field they
// would break the layout.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * One line of plain text, at most `max` code points: unsafe characters become a space, runs of
 * white space one space, an over-long value ends in `…`. Safe in a header value and in a
 * one-line body field.
 */
export function oneLine(value: unknown, max: number): string {
  const s = String(value ?? '')
    .replace(LONE_SURROGATE, '\uFFFD')
    .replace(UNSAFE, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(s);
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** `2026-01-04 03:12:05 UTC`: unambiguous for every reader, whatever their time zone. */
export function formatUtc(ms: number): string {
  if (!Number.isFinite(ms)) return 'unknown';
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return 'unknown';
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** `3 days 2 hours`, `5 hours 10 minutes`, `40 minutes`: the two largest units, enough to read at a glance. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return 'an unknown time';
  const units: Array<[string, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    if (parts.length === 2) break;
  }
  const shown = parts.filter((p) => !p.startsWith('0 '));
  return shown.length > 0 ? shown.join(' ') : 'less than a minute';
}
