/**
 * Refuses options a factory does not know: a misspelt or retired option silently ignored is a
 * default the host never chose (an old `retry: {…}` that quietly gives the default back-off).
 */

/** An option a factory does not know. A `TypeError` (misuse of options) with a stable code. */
export class UnknownOptionError extends TypeError {
  /** Always `ERR_UNKNOWN_OPTION`. */
  readonly code = 'ERR_UNKNOWN_OPTION' as const;
  /** The option as written, with its path (`delivery.timeout`). */
  readonly option: string;
  /** The nearest known option, when one is near enough to be what was meant. */
  readonly suggestion: string | undefined;

  constructor(where: string, option: string, suggestion: string | undefined) {
    super(`${where}: unknown option ${JSON.stringify(option)}${suggestion ? ` (did you mean ${JSON.stringify(suggestion)}?)` : ''}`);
    this.name = 'UnknownOptionError';
    this.option = option;
    this.suggestion = suggestion;
  }
}

/** Options renamed or replaced: the old name points at the new one whatever the spelling distance. */
const RENAMED: Readonly<Record<string, string>> = {
  retry: 'backoff',
  retries: 'backoff',
  retryPolicy: 'backoff',
  timeout: 'timeoutMs',
  lease: 'leaseMs',
  pollInterval: 'pollIntervalMs',
  secret: 'secretsKey',
  secretKey: 'secretsKey',
  key: 'keys',
  signingKey: 'keys',
  signingKeys: 'keys',
};

/**
 * Throws {@link UnknownOptionError} for the first own key of `options` not in `known`
 * (`prefix`: the path of a nested object, e.g. `delivery.`). Keys whose value is `undefined`
 * count too: spelling them is still a mistake.
 */
export function refuseUnknown(where: string, options: object | null | undefined, known: readonly string[], prefix = ''): void {
  if (options === null || typeof options !== 'object') return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    throw new UnknownOptionError(where, `${prefix}${key}`, suggestionFor(key, known, prefix));
  }
}

function suggestionFor(key: string, known: readonly string[], prefix: string): string | undefined {
  const renamed = RENAMED[key];
  if (renamed !== undefined && known.includes(renamed)) return `${prefix}${renamed}`;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const lower = key.toLowerCase();
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Near enough to be a slip: a third of the name, at least two edits (`timout`, `batchsize`).
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? `${prefix}${best}` : undefined;
}

/** Levenshtein distance (names are short: a row at a time). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
