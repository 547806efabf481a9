import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { NoticeRecord } from '../model.js';
import type { DeliveryStore, NoticeOutcome, NoticeStore } from '../store.js';
import { logFields } from '../telemetry/log-fields.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { transient } from '../transient.js';
import type { Logger, Notifier, WebhookDisabledInfo } from '../types.js';

/**
 * The back-off of a notice the notifier failed to take: minutes, then hours, for about four days
 * (a mail server down over a long weekend still gets the notice through). Then it is `failed`,
 * logged as an error, and listed by `hooks.notices.list()`.
 */
export const NOTICE_BACKOFF: readonly number[] = [
  60_000,
  5 * 60_000,
  15 * 60_000,
  3600_000,
  2 * 3600_000,
  4 * 3600_000,
  8 * 3600_000,
  12 * 3600_000,
  24 * 3600_000,
  24 * 3600_000,
  24 * 3600_000,
];

/**
 * The worst case of one notice must fit inside its lease, or a live process that is merely slow
 * would see its notice claimed and sent again by another: the notifier's watchdog (4 min) plus the
 * transient retries of recording the result (at most 45 s) plus a margin for the last try in flight
 * (15 s) is the lease (5 min). The record's budget is also cut to what is left of the lease on the
 * engine's clock, so it never tries past `lease end - margin`.
 */
const NOTICE_LEASE_MS = 5 * 60_000;
/** Longest wait for the host's notifier. */
const NOTIFIER_TIMEOUT_MS = 4 * 60_000;
/** Kept free at the end of the lease: the last record try may take this long (a busy SQLite file, a slow statement). */
const LEASE_MARGIN_MS = 15_000;
/** Longest transient retry of recording a notice's result: the lease less the watchdog and the margin (45 s). */
const RECORD_BUDGET_MS = NOTICE_LEASE_MS - NOTIFIER_TIMEOUT_MS - LEASE_MARGIN_MS;
const BATCH = 16;

export interface NoticeOutboxDeps {
  store: NoticeStore & Pick<DeliveryStore, 'nextDueAt'>;
  clock: Clock;
  notifier: Notifier | undefined;
  logger: Logger;
  /** Counts each call of the notifier by outcome. */
  telemetry: Telemetry;
  workerId: string;
  /** Longest wait before looking for notices another process wrote. */
  pollIntervalMs: number;
}

/**
 * Delivers the notice outbox to the host's notifier. A notice is a row written in the
 * transaction that disabled the webhook; here it is claimed under a lease (so two processes on
 * one PostgreSQL never both send it, and a process that dies mid-notice leaves it to the next),
 * handed to `notifier.webhookDisabled(info)` with `info.noticeId`, and marked sent, or tried again on
 * NOTICE_BACKOFF when the notifier throws.
 *
 * Exactly once is impossible across a crash after the notifier finished (say, the mail server
 * accepted the message) and before `sent` was committed (or a database that cannot take the result
 * before the lease ends, which looks the same from outside): the notice is then sent again, with
 * the same noticeId (the SMTP notifier makes it the Message-ID). At most twice, in that case only:
 * a send that is merely slow is recorded inside its lease (see NOTICE_LEASE_MS).
 */
export class NoticeOutbox {
  /** Before this time there is nothing to look for (unless poked). */
  #checkAt = 0;
  readonly #isTransient: (error: unknown) => boolean;

  constructor(private readonly deps: NoticeOutboxDeps) {
    this.#isTransient = (error) => deps.store.isTransient(error);
  }

  /** A notice was just written (a disable was recorded here): look at the next chance. */
  poke(): void {
    this.#checkAt = 0;
  }

  /**
   * Sends every notice due now, in small batches; a no-op without a notifier or before it is time
   * to look. True when it claimed any (and so wrote: sent, or the next try's time).
   */
  async runIfDue(): Promise<boolean> {
    const { notifier, clock, store, workerId } = this.deps;
    if (!notifier) return false; // pending notices wait for a process that has one
    const now = clock.now();
    if (now < this.#checkAt) return false;
    this.#checkAt = now + this.deps.pollIntervalMs;
    let any = false;
    for (;;) {
      let leaseEnd = 0;
      const claimed = await transient(this.#isTransient, () => {
        const at = clock.now();
        leaseEnd = at + NOTICE_LEASE_MS;
        return store.claimNotices({ now: at, limit: BATCH, workerId, leaseMs: NOTICE_LEASE_MS });
      });
      any ||= claimed.length > 0;
      await Promise.all(claimed.map((notice) => this.#send(notifier, notice, leaseEnd)));
      if (claimed.length < BATCH) break;
    }
    // Next tries come due later: look again then (the scheduler's timer is armed for it too), even
    // those of notices another run or process tried: a due notice nobody looks for would keep
    // the scheduler's timer at its time.
    const next = await transient(this.#isTransient, () => store.nextDueAt()).catch(() => null);
    if (next !== null && next > now) this.#checkAt = Math.min(this.#checkAt, next);
    return any;
  }

  /** Sends one claimed notice and records the result, all before `leaseEnd` (the engine's clock). */
  async #send(notifier: Notifier, notice: NoticeRecord, leaseEnd: number): Promise<void> {
    const { store, clock, logger, workerId, telemetry } = this.deps;
    const { webhook, failingSince, disabledAt, lastError } = notice.info;
    const info: WebhookDisabledInfo = {
      noticeId: notice.id,
      webhook,
      environment: notice.environment,
      reason: webhook.disabledReason === 'gone' ? 'gone' : 'failing',
      failingSince,
      disabledAt,
      lastError,
    };
    let outcome: NoticeOutcome;
    try {
      await withTimeout(
        Promise.resolve().then(() => notifier.webhookDisabled(info)),
        NOTIFIER_TIMEOUT_MS,
      );
      outcome = { now: clock.now(), sent: true };
      telemetry.notice(true);
    } catch (error) {
      telemetry.notice(false);
      const now = clock.now();
      const delay = NOTICE_BACKOFF[notice.attempts];
      const nextAttemptAt = delay === undefined ? null : now + delay;
      const meta = { ...logFields(error, { noticeId: notice.id, webhookId: webhook.id }), attempt: notice.attempts + 1 };
      if (nextAttemptAt === null) logger.error('the notifier kept failing; the notice is given up (see hooks.notices.list)', meta);
      else logger.warn(`the notifier failed; the notice is tried again at ${new Date(nextAttemptAt).toISOString()}`, meta);
      outcome = { now, sent: false, nextAttemptAt, error: describeError(error) };
    }
    // A transient retry only while the lease has room; past that, one try: it still records the
    // result if nobody has claimed the notice since, and changes nothing if someone has.
    const room = Math.min(RECORD_BUDGET_MS, leaseEnd - LEASE_MARGIN_MS - clock.now());
    const record = () => store.finishNotice(notice.id, workerId, outcome);
    try {
      await (room > 0 ? transient(this.#isTransient, record, room) : record());
    } catch (error) {
      // Not recorded: the lease runs out and the notice is tried again (same noticeId). Only here
      // and after a crash can a notice the notifier took be sent twice.
      logger.error(
        'could not record a notice; its lease will expire and it will be sent again',
        logFields(error, { noticeId: notice.id, webhookId: webhook.id }),
      );
    }
  }
}

/**
 * A watchdog on the host's callback, on the wall clock rather than the engine's Clock: it bounds
 * how long a real notifier may hang, which a test's ManualClock has no say in.
 */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the notifier did not finish within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
