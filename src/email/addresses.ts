import { loadAddressparser } from './load.js';

/** A parsed mailbox, handed to nodemailer as an object so it formats (and encodes) the header itself. */
export interface Mailbox {
  readonly name: string;
  readonly address: string;
}

/** Recipients as `to` may return them: one address, a list in one string, or an array of either. */
export type Recipients = string | readonly string[];

// A dot-atom local part and a domain of non-empty labels. Quoted local parts and address
// literals are legal but never what an account holder's address looks like; refusing them keeps
// the check small and the envelope predictable.
const SPECIALS = '\\s@<>()[\\]\\\\,;:"';
const ADDRESS = new RegExp(`^[^${SPECIALS}]+@(?:[^${SPECIALS}.]+\\.)*[^${SPECIALS}.]+$`, 'u');
// Anything that could end a header line or hide in one.
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/u;
/** The most recipients one notice goes to: it is for an account holder, not a mailing list. */
export const MAX_RECIPIENTS = 50;

/**
 * Parses one address field (`Name <a@b.example>`, `a@b.example`, or a comma-separated list) into
 * mailboxes, or returns the reason it cannot. Groups are flattened.
 */
export function parseMailboxes(value: unknown): Mailbox[] | string {
  if (typeof value !== 'string') return `must be a string, not ${value === null ? 'null' : typeof value}`;
  if (value.trim() === '') return 'must not be empty';
  if (value.length > 998) return 'is too long for a mail header';
  // Checked on the raw string: addressparser would quietly fold a newline into the name.
  if (CONTROL.test(value)) return 'must not contain line breaks or control characters';
  const parsed = loadAddressparser()(value, { flatten: true });
  if (parsed.length === 0) return 'holds no address';
  const out: Mailbox[] = [];
  for (const { name, address } of parsed) {
    if (!ADDRESS.test(address)) return `holds an invalid address ${JSON.stringify(address || name)}`;
    out.push(Object.freeze({ name, address }));
  }
  return out;
}

/** The one sender mailbox of `from`, or a TypeError naming the option. */
export function parseFrom(value: unknown): Mailbox & { readonly domain: string } {
  const parsed = parseMailboxes(value);
  if (typeof parsed === 'string') throw new TypeError(`smtpNotifier: from ${parsed}`);
  if (parsed.length !== 1) throw new TypeError('smtpNotifier: from must be exactly one address');
  const { name, address } = parsed[0]!;
  return Object.freeze({ name, address, domain: address.slice(address.lastIndexOf('@') + 1) });
}

/**
 * What `to` returned, checked: at least one valid address, at most {@link MAX_RECIPIENTS}.
 * Throws (so the notice is tried again and the operator sees it) rather than sending to no one.
 */
export function parseRecipients(value: unknown): Mailbox[] {
  const list = typeof value === 'string' ? [value] : Array.isArray(value) ? (value as unknown[]) : null;
  if (list === null) throw new Error(`smtpNotifier: to() must return an address or an array of addresses, not ${describe(value)}`);
  const out: Mailbox[] = [];
  for (const [i, entry] of list.entries()) {
    const parsed = parseMailboxes(entry);
    if (typeof parsed === 'string') throw new Error(`smtpNotifier: to() returned a recipient that ${parsed} (entry ${i})`);
    out.push(...parsed);
  }
  if (out.length === 0) throw new Error('smtpNotifier: to() returned no recipient');
  if (out.length > MAX_RECIPIENTS) throw new Error(`smtpNotifier: to() returned ${out.length} recipients; at most ${MAX_RECIPIENTS}`);
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  return typeof value;
}
