import { describe, expect, test } from 'vitest';
import { newId } from '../../src/ids.js';

describe('ids', () => {
  test('ids of one millisecond sort in the order they were made; later milliseconds sort after; all distinct', () => {
    const at = Date.parse('2026-01-01T00:00:00.000Z');
    const same = Array.from({ length: 1000 }, () => newId('msg', at));
    expect([...same].sort()).toEqual(same);
    expect(new Set(same).size).toBe(1000);
    for (const id of same) expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(same[0]!.slice(4, 16)).toBe(at.toString(16).padStart(12, '0'));
    const later = newId('msg', at + 1);
    expect(later > same.at(-1)!).toBe(true);
    // A clock that went back: the id carries its own time (not made monotonic across milliseconds).
    expect(newId('msg', at - 5).slice(4, 16)).toBe((at - 5).toString(16).padStart(12, '0'));
  });
});
