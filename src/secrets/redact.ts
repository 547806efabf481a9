/**
 * Secrets kept out of what an endpoint echoes back (the attempt log, a webhook's last error, the
 * database): each secret in every form a server may echo it in.
 */

/** What every redacted secret is replaced with (the header mask: no stored value can equal it). */
const MASK = '••••••••';

/**
 * The forms a secret may come back in: as it is, base64 (standard and URL-safe, with and without
 * padding), URL-encoded (a form body), JSON-escaped (a JSON echo), and HTML-escaped.
 */
export function secretForms(secret: string): string[] {
  if (secret.length < 4) return [];
  const base64 = Buffer.from(secret).toString('base64');
  const forms = [
    secret,
    base64,
    base64.replace(/=+$/, ''),
    Buffer.from(secret).toString('base64url'),
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    secret.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
  ];
  return [...new Set(forms)].filter((f) => f.length >= 4);
}

/** `text` with every form of every secret replaced by the mask, longest first (a form may contain another). */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0 || text.length === 0) return text;
  const forms = [...new Set(secrets.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  let out = text;
  for (const form of forms) out = out.replaceAll(form, MASK);
  return out;
}
