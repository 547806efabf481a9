import { activityOf, settledIn } from '../activity.js';
import { ValidationError } from '../errors.js';
import { durationQuantile, RANGES, type Range, seriesOf, successRate, windowOf } from '../stats.js';
import type { Management } from '../types.js';
import { environmentOf as env, type ManagementDeps } from './shared.js';

/** The dashboard's figures: the list's day of every webhook, and one webhook's overview over a range. */
export function statsFunctions({ access, clock }: ManagementDeps): Pick<Management['webhooks'], 'stats' | 'overview'> {
  return {
    async stats(options) {
      const environment = env(options);
      const now = clock.now();
      const window = windowOf('24h', now);
      // The settled hours from their packs, the live ones from the counters (src/activity.ts).
      const [ids, tables] = await access.run('reading webhook stats', (s) =>
        Promise.all([
          s.listWebhookIds(environment),
          s.readCounts(environment, { since: window.since, until: window.until, settled: settledIn(window, now) }),
        ]),
      );
      const byWebhook = activityOf(tables, window);
      return ids.map((webhookId) => {
        const a = byWebhook.get(webhookId);
        const succeeded = a?.succeeded ?? 0;
        const failed = a?.failed ?? 0;
        return {
          webhookId,
          attempts: succeeded + failed,
          succeeded,
          failed,
          successRate: successRate(succeeded, failed),
          series: a?.points ?? seriesOf([], window).points,
        };
      });
    },
    async overview(id, options) {
      const environment = env(options);
      const range = options?.range ?? '24h';
      if (typeof range !== 'string' || !Object.hasOwn(RANGES, range))
        throw new ValidationError(`range must be one of ${Object.keys(RANGES).join(', ')}`, { field: 'range' });
      const window = windowOf(range as Range, clock.now());
      const rows = await access.find('webhook', id, 'reading a webhook overview', async (s) =>
        (await s.getWebhook(environment, id))
          ? s.readHours(environment, { webhookId: id, since: window.since, until: window.until, stepMs: window.stepMs })
          : null,
      );
      const series = seriesOf(rows, window);
      return {
        webhookId: id,
        range: range as Range,
        since: series.since,
        until: series.until,
        stepMs: series.stepMs,
        points: series.points,
        attempts: series.succeeded + series.failed,
        succeeded: series.succeeded,
        failed: series.failed,
        successRate: successRate(series.succeeded, series.failed),
        medianMs: durationQuantile(series.durations, 0.5),
        p95Ms: durationQuantile(series.durations, 0.95),
      };
    },
  };
}
