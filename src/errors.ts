/**
 * Every failure the engine reports on purpose is a {@link WebhooksError} with a stable `code`.
 * Misuse of options (a programming error in the host) is a plain `TypeError`, thrown at once.
 *
 * Every error class takes its arguments in one order: the code first when the class has more
 * than one (`WebhooksError`, `TransportError`), then the message, then an options object
 * (`field`, `cause`); a class whose code is fixed starts at the message (`ValidationError`).
 * All of them expose `.code`.
 *
 * @example
 * ```ts
 * try { await hooks.webhooks.create(input) }
 * catch (e) { if (e instanceof WebhooksError && e.code === 'ERR_LIMIT_REACHED') upsell() }
 * ```
 */
export type WebhooksErrorCode =
  | 'ERR_VALIDATION'
  | 'ERR_UNKNOWN_EVENT_TYPE'
  | 'ERR_NOT_FOUND'
  | 'ERR_LIMIT_REACHED'
  | 'ERR_PAYLOAD_TOO_LARGE'
  | 'ERR_ENDPOINT_NOT_ALLOWED'
  | 'ERR_WEBHOOK_DISABLED'
  | 'ERR_CLOSED'
  | 'ERR_STORE'
  /**
   * `emit` was called without `{ transaction }` while the database connection it shares with the
   * host is inside the host's transaction (or with a `transaction` that is not one): pass the
   * transaction the write belongs to.
   */
  | 'ERR_TRANSACTION_REQUIRED'
  /**
   * A webhook needs a secret stored sealed (a credential header, a signing secret, endpoint auth)
   * and the engine has no `secretsKey`, or a stored secret does not open under the keys it has.
   */
  | 'ERR_SECRETS_KEY_REQUIRED';

export class WebhooksError extends Error {
  readonly code: WebhooksErrorCode;
  /** The input field the error is about, when there is one (`endpoint`, `event_types[1]`, `data.user.email`). */
  readonly field: string | undefined;

  constructor(code: WebhooksErrorCode, message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.field = options.field;
  }
}

/** Bad input, refused before anything is written. `code` is `ERR_VALIDATION` unless a finer one applies. */
export class ValidationError extends WebhooksError {
  constructor(message: string, options: { field?: string; code?: WebhooksErrorCode; cause?: unknown } = {}) {
    super(options.code ?? 'ERR_VALIDATION', message, options);
  }
}

export class NotFoundError extends WebhooksError {
  constructor(what: string, id: string) {
    super('ERR_NOT_FOUND', `${what} ${JSON.stringify(id)} was not found`);
  }
}

export class LimitReachedError extends WebhooksError {
  constructor(
    readonly limit: number,
    environment: string,
  ) {
    super('ERR_LIMIT_REACHED', `environment ${JSON.stringify(environment)} already has the maximum of ${limit} webhooks`);
  }
}

/** An operation that sends (resend, recover, test event) was asked of a disabled webhook. */
export class WebhookDisabledError extends WebhooksError {
  constructor(id: string) {
    super('ERR_WEBHOOK_DISABLED', `webhook ${JSON.stringify(id)} is disabled; enable it first`);
  }
}

/**
 * Wraps anything thrown by a store so its origin survives as `cause`. Our own errors and misuse
 * (`TypeError`, e.g. a `transaction` that is not a Kysely transaction) pass through unchanged.
 */
export function storeError(cause: unknown, doing: string): Error {
  if (cause instanceof WebhooksError || cause instanceof TypeError) return cause;
  // The cause's own words are what tells the host what to fix ("lacks migration(s) 2 … run
  // migratePostgres", "ECONNREFUSED 127.0.0.1:5432", "database \"x\" does not exist"). This
  // message goes to the host's code and logs; over HTTP an ERR_STORE is a bare 500.
  const why = cause instanceof Error ? cause.message : typeof cause === 'string' ? cause : '';
  const code = (cause as { code?: unknown } | null)?.code;
  const detail = why ? `: ${why.split('\n')[0]!.slice(0, 300)}${typeof code === 'string' && !why.includes(code) ? ` (${code})` : ''}` : '';
  return new WebhooksError('ERR_STORE', `store failed while ${doing}${detail}`, { cause });
}

/** An error as one line for a log: its name, message and cause, never a stack or payload. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}
