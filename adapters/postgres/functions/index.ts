import type { StoredFunction } from '../../kysely/migrations.js';
import { CLAIM_DUE } from './claim-due.js';
import { DEQUEUE } from './dequeue.js';
import { EMIT } from './emit.js';
import { PROMOTE } from './promote.js';
import { TALLY } from './tally.js';

/**
 * PostgreSQL's stored functions, each at its current version in a file of its own, applied
 * again by the store's migration whenever its text changes (decision 019).
 */
export const STORED_FUNCTIONS: readonly StoredFunction[] = [CLAIM_DUE, EMIT, DEQUEUE, PROMOTE, TALLY];
