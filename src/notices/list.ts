import { ValidationError } from '../errors.js';
import type { NoticeRecord, NoticeStatus } from '../model.js';
import type { StoreAccess } from '../store-access.js';
import { environmentOf } from '../validate.js';

const STATUSES: readonly NoticeStatus[] = ['pending', 'sent', 'failed'];

/** `hooks.notices.list`: the outbox as an operator sees it. */
export async function listNotices(
  access: StoreAccess,
  filter: { status?: NoticeStatus; environment?: string; limit?: number } = {},
): Promise<NoticeRecord[]> {
  const limit = filter.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new ValidationError('limit must be an integer from 1 to 1000', { field: 'limit' });
  if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
    throw new ValidationError(`status must be one of ${STATUSES.join(', ')}`, { field: 'status' });
  }
  const environment = filter.environment === undefined ? undefined : environmentOf(filter.environment);
  return access.run('listing notices', (s) => s.listNotices({ environment, status: filter.status, limit }));
}
