import { expect, test } from 'vitest';
import { decodeWords, parseMail } from '../helpers/smtp.js';

// The helper decides what the email tests see, so its reader is tested on mail it did not write.

test('encoded-words: B and Q, adjacent words joined even when a character is split between them', () => {
  expect(decodeWords('=?UTF-8?Q?Webhook_=22Caf=C3=A9=22?= was disabled')).toBe('Webhook "Café" was disabled');
  expect(decodeWords('=?utf-8?B?SGVsbG8g?= =?utf-8?B?d29ybGQ=?=')).toBe('Hello world');
  // "✓" is E2 9C 93: split across two words.
  expect(decodeWords('=?UTF-8?Q?a_=E2=9C?=\r\n =?UTF-8?Q?=93_b?=')).toBe('a ✓ b');
  expect(decodeWords('plain =?ISO-8859-1?Q?caf=E9?= text')).toBe('plain café text');
  expect(decodeWords('no words here')).toBe('no words here');
});

test('headers unfolded, a line without a colon kept apart, nested multipart with QP and base64 parts', () => {
  const raw = [
    'From: a@acme.example',
    'Subject: =?UTF-8?Q?Long_subject_that_was?=',
    ' =?UTF-8?Q?_folded?=',
    'X-Odd: one',
    'X-Odd: two',
    'not a header line',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    'preamble',
    '--outer',
    'Content-Type: multipart/alternative;',
    '\tboundary=inner',
    '',
    '--inner',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Caf=C3=A9 au lait, a long line that was wrapped =',
    'softly.   ',
    'Second line.',
    '--inner',
    'Content-Type: text/html; charset="utf-8"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('<p>Café</p>\r\n').toString('base64'),
    '--inner--',
    '--outer',
    'Content-Type: application/octet-stream',
    'Content-Transfer-Encoding: base64',
    '',
    'AAEC',
    '--outer--',
    '',
  ].join('\r\n');
  const m = parseMail(raw, { from: 'a@acme.example', to: ['b@acme.example'] });
  expect(m.subject).toBe('Long subject that was folded');
  expect(m.headers.get('x-odd')).toEqual(['one', 'two']);
  expect(m.headers.get('')).toEqual(['not a header line']);
  expect(m.parts.map((p) => p.contentType)).toEqual(['text/plain', 'text/html', 'application/octet-stream']);
  expect(m.text).toBe('Café au lait, a long line that was wrapped softly.\nSecond line.');
  expect(m.html).toBe('<p>Café</p>\n');
  expect(Buffer.from(m.parts[2]!.body, 'latin1')).toEqual(Buffer.from([0, 1, 2]));
  expect(m.to).toEqual(['b@acme.example']);
});

test('a message without MIME structure is one text/plain part', () => {
  const m = parseMail('Subject: hi\r\n\r\nbody\r\n', { from: '', to: [] });
  expect(m.subject).toBe('hi');
  expect(m.text).toBe('body\n');
  expect(m.html).toBeUndefined();
});
