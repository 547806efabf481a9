import { beforeEach, describe, expect, test } from 'vitest';
import type { DashboardGrantRecord } from '../../src/model.js';
import type { Store } from '../../src/store.js';
import { T0 } from './conformance.js';

/**
 * Dashboard link access (migration 20), part of the store contract: a link is redeemed once,
 * before it expires, into a session that expires in its turn. Run by describeStore on every
 * adapter; `sibling()` is another process on the same database.
 */
export function describeDashboardContract(ready: () => Promise<Store>, sibling: () => Promise<Store>): void {
  describe('dashboard links and sessions', () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });
    const link = (id: string, over: Partial<DashboardGrantRecord> = {}): DashboardGrantRecord => ({
      id,
      kind: 'link',
      environment: 'env_a',
      capability: 'read',
      next: '/w#/catalog',
      expiresAt: T0 + 1000,
      usedAt: null,
      createdAt: T0,
      ...over,
    });

    test('a link redeems once into a session that carries its environment and capability, then expires', async () => {
      await s.insertDashboardGrant!(link('l1'), T0);
      const session = await s.redeemDashboardLink!('l1', { id: 's1', expiresAt: T0 + 5000 }, T0 + 10);
      expect(session).toEqual({
        id: 's1',
        kind: 'session',
        environment: 'env_a',
        capability: 'read',
        next: '/w#/catalog',
        expiresAt: T0 + 5000,
        usedAt: null,
        createdAt: T0 + 10,
      });
      expect(await s.redeemDashboardLink!('l1', { id: 's2', expiresAt: T0 + 5000 }, T0 + 11)).toBeNull();
      expect(await s.getDashboardSession!('s2', T0 + 12)).toBeNull();
      expect(await s.getDashboardSession!('s1', T0 + 4999)).toMatchObject({ environment: 'env_a', next: null });
      expect(await s.getDashboardSession!('s1', T0 + 5000)).toBeNull();
      // A link is not a session, nor a session a link.
      expect(await s.getDashboardSession!('l1', T0)).toBeNull();
      expect(await s.redeemDashboardLink!('s1', { id: 's3', expiresAt: T0 + 5000 }, T0)).toBeNull();
    });

    test('an expired link redeems into nothing, and writes nothing', async () => {
      await s.insertDashboardGrant!(link('l2'), T0);
      expect(await s.redeemDashboardLink!('l2', { id: 's4', expiresAt: T0 + 9000 }, T0 + 1000)).toBeNull();
      expect(await s.getDashboardSession!('s4', T0 + 1000)).toBeNull();
    });

    test('two processes opening one link at once: exactly one session', async () => {
      const other = await sibling();
      await s.insertDashboardGrant!(link('l3'), T0);
      const results = await Promise.all([
        s.redeemDashboardLink!('l3', { id: 's5', expiresAt: T0 + 9000 }, T0 + 1),
        other.redeemDashboardLink!('l3', { id: 's6', expiresAt: T0 + 9000 }, T0 + 1),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    test('each mint sweeps grants that expired', async () => {
      await s.insertDashboardGrant!(link('old', { expiresAt: T0 + 1 }), T0);
      await s.insertDashboardGrant!(link('new', { expiresAt: T0 + 10_000 }), T0 + 2);
      // Gone, not merely refused: a fresh grant with the same id can be written.
      await s.insertDashboardGrant!(link('old', { expiresAt: T0 + 10_000 }), T0 + 3);
      expect(await s.redeemDashboardLink!('old', { id: 's7', expiresAt: T0 + 9000 }, T0 + 4)).not.toBeNull();
    });
  });
}
