import { decodeCursor } from '../cursor.js';
import type { DeliveryStatus } from '../model.js';
import type { StatsRange } from '../types.js';
import { HttpError, type InvalidName, invalidCode } from './errors.js';
import { onlyFields } from './input.js';

/**
 * Wire input of the delivery operations (the log's query string, the recover and test bodies) to
 * engine input. As in input.ts, only forms are judged here (a number, a date-time, a string), with
 * messages that name the wire parameter; the values (a known status, a known event type, since
 * before until) are the engine's to judge, and `errors.ts` names the parameter in the code.
 */

const LOG_PARAMETERS = ['status', 'event_type', 'page_size', 'next_token', 'since', 'until', 'search'] as const;
/** The page size bounds of `hooks.deliveries.list` (its `limit`). */
const PAGE_SIZE = { min: 1, max: 100 };

export interface LogQuery {
  status?: DeliveryStatus;
  eventType?: string;
  limit?: number;
  cursor?: string;
  since?: number;
  until?: number;
  eventId?: string;
  deliveryId?: string;
}

/**
 * Refuses a parameter not in `allowed` (a typo like `pagesize` must not silently give the
 * default), and one given twice, in the order they come.
 */
function onlyParameters(url: URL, allowed: readonly InvalidName[]): void {
  const seen = new Set<string>();
  for (const key of url.searchParams.keys()) {
    if (!(allowed as readonly string[]).includes(key)) {
      throw new HttpError(
        'UNKNOWN_PARAMETER',
        `${JSON.stringify(key.slice(0, 64))} is not a parameter of this request (allowed: ${allowed.join(', ')})`,
        { status: 400 },
      );
    }
    if (seen.has(key)) throw new HttpError(invalidCode(key as InvalidName), `${key} may be given once`, { status: 400 });
    seen.add(key);
  }
}

/** A page size as the wire gives it: an integer within the bounds of `hooks.deliveries.list`'s `limit`. */
function pageSizeOf(text: string): number {
  const n = /^[0-9]{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= PAGE_SIZE.min && n <= PAGE_SIZE.max))
    throw new HttpError('INVALID_PAGE_SIZE', `page_size must be an integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`, { status: 400 });
  return n;
}

/**
 * `GET …/deliveries?status=&event_type=&since=&until=&search=&page_size=&next_token=`: `since` and
 * `until` are ISO 8601 date-times (created at or after, before); `search` an event id (`event_…`)
 * or a delivery id (`msg_…`, its `webhook-id`). An unknown parameter is refused
 * (a typo like `pagesize` must not silently give the default), and so is a repeated one. An
 * empty value is the same as none, as generated clients and HTML forms send them.
 */
export function logQuery(url: URL): LogQuery {
  onlyParameters(url, LOG_PARAMETERS);
  const value = (key: (typeof LOG_PARAMETERS)[number]) => url.searchParams.get(key) || undefined;
  const query: LogQuery = {};
  const status = value('status');
  if (status !== undefined) query.status = status as DeliveryStatus;
  const eventType = value('event_type');
  if (eventType !== undefined) query.eventType = eventType;
  const pageSize = value('page_size');
  if (pageSize !== undefined) query.limit = pageSizeOf(pageSize);
  for (const key of ['since', 'until'] as const) {
    const at = value(key);
    if (at !== undefined) query[key] = dateTime(at, key);
  }
  const search = value('search')?.trim();
  if (search) {
    if (search.startsWith('event_')) query.eventId = search;
    else if (search.startsWith('msg_')) query.deliveryId = search;
    else
      throw new HttpError('INVALID_SEARCH', 'search must be an event id (event_…) or a delivery id (msg_…, the webhook-id header)', {
        status: 400,
      });
  }
  const token = value('next_token');
  if (token !== undefined) {
    // Decoded here only to name the parameter in the message; the engine decodes it again.
    decodeCursor(token, 'next_token');
    query.cursor = token;
  }
  return query;
}

const SEARCH_PARAMETERS = ['subject', 'page_size', 'next_token'] as const;

/**
 * `GET /api/v1/events?subject=&page_size=&next_token=`: a subject or an email (required), as the
 * log's query is judged: an unknown or repeated parameter is refused.
 */
export function searchQuery(url: URL): { subject: string; limit?: number; cursor?: string } {
  onlyParameters(url, SEARCH_PARAMETERS);
  const subject = url.searchParams.get('subject')?.trim();
  if (!subject) throw new HttpError('INVALID_SUBJECT', 'subject is required: a user id, an organization code or an email', { status: 400 });
  const query: { subject: string; limit?: number; cursor?: string } = { subject };
  const pageSize = url.searchParams.get('page_size') || undefined;
  if (pageSize !== undefined) query.limit = pageSizeOf(pageSize);
  const token = url.searchParams.get('next_token') || undefined;
  if (token !== undefined) {
    decodeCursor(token, 'next_token', 'event');
    query.cursor = token;
  }
  return query;
}

/**
 * The stats' query: `range` where `allowed` has it (its value is the engine's to judge); any other
 * parameter is refused, as the log's are.
 */
export function overviewQuery(url: URL, allowed: readonly 'range'[]): { range?: StatsRange } {
  for (const key of url.searchParams.keys()) {
    if (!(allowed as readonly string[]).includes(key))
      throw new HttpError(
        'UNKNOWN_PARAMETER',
        `${JSON.stringify(key.slice(0, 64))} is not a parameter of this request${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`,
        { status: 400 },
      );
  }
  const range = url.searchParams.getAll('range');
  if (range.length > 1) throw new HttpError('INVALID_RANGE', 'range may be given once', { status: 400 });
  return range[0] ? { range: range[0] as StatsRange } : {};
}

/** `POST …/recover` body: `{ since, until? }`, ISO 8601 date-times. */
export function recoverInput(body: Record<string, unknown>): { since: number; until?: number } {
  onlyFields(body, ['since', 'until']);
  if (body.since === undefined || body.since === null)
    throw new HttpError('INVALID_SINCE', 'since is required (an ISO 8601 date-time)', { status: 400 });
  const since = dateTime(body.since, 'since');
  if (body.until === undefined || body.until === null) return { since };
  return { since, until: dateTime(body.until, 'until') };
}

/** `POST …/resend` body (optional): no fields. */
export function resendInput(body: Record<string, unknown>): void {
  onlyFields(body, []);
}

/** `POST …/test` body (optional): `{ event_type? }`; absent or null is the webhook's first type. */
export function testInput(body: Record<string, unknown>): { eventType?: string } {
  onlyFields(body, ['event_type']);
  const type = body.event_type;
  if (type === undefined || type === null) return {};
  if (typeof type !== 'string')
    throw new HttpError('INVALID_EVENT_TYPE', 'event_type must be a string (an event type code)', { status: 400 });
  return { eventType: type };
}

/**
 * RFC 3339 `date-time` (the ISO 8601 profile OpenAPI's `format: date-time` means): date, time and
 * an offset, all required, e.g. `2026-01-01T00:00:00Z`. Other forms are refused rather than
 * guessed at (`Date.parse` takes a bare date as UTC but a bare date-time as local time, and rolls
 * February 30 over into March).
 */
const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d{1,9})?([Zz]|[+-](\d\d):(\d\d))$/;

export function dateTime(value: unknown, field: 'since' | 'until'): number {
  const refused = () =>
    new HttpError(invalidCode(field), `${field} must be an ISO 8601 date-time with an offset, e.g. 2026-01-01T00:00:00Z`, {
      status: 400,
    });
  if (typeof value !== 'string') throw refused();
  const m = DATE_TIME.exec(value);
  if (!m) throw refused();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = m[9] === undefined ? 0 : Number(m[9]);
  const offsetMinutes = m[10] === undefined ? 0 : Number(m[10]);
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) throw refused();
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) throw refused();
  const ms = Date.parse(value.toUpperCase());
  if (!Number.isFinite(ms)) throw refused();
  return ms;
}
