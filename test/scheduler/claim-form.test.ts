import { describe, expect, test } from 'vitest';
import { ClaimForm, leftOutKeys } from '../../src/scheduler/claim-form.js';

/** The scheduler's choice of form for claims that leave something out (`ClaimArgs.byWebhook`). */
describe('claim form', () => {
  test('per webhook at first; along the due index after a full claim; back per webhook after a short one', () => {
    const form = new ClaimForm();
    expect(form.next()).toBe(true);
    form.record(1, 64, 64, true); // full
    expect(form.next()).toBe(false);
    form.record(1, 10, 64, null); // a claim leaving nothing out changes nothing
    expect(form.next()).toBe(false);
    form.record(1, 3, 64, false); // short
    expect(form.next()).toBe(false); // the due index answered a short claim in 1 ms: not slow, keep it
    const fresh = new ClaimForm();
    fresh.record(0.5, 0, 64, true);
    expect(fresh.next()).toBe(true); // cheap per webhook: keep it
  });

  test('a slow per-webhook claim (many webhooks with pending work) makes the next short claim try the due index, then the cheaper stays', () => {
    const form = new ClaimForm();
    for (let i = 0; i < 20; i++) form.record(1, 64, 64, null); // typical claims of 1 ms
    form.record(85, 0, 64, true); // per webhook, short, 85 ms
    expect(form.next()).toBe(false);
    form.record(1.7, 0, 64, false); // the due index: 1.7 ms
    expect(form.next()).toBe(false);
    form.record(1.8, 0, 64, false);
    expect(form.next()).toBe(false);
  });

  test('a slow due-index claim (a deep backlog left out) makes the next short claim go per webhook, and the cheaper stays', () => {
    const form = new ClaimForm();
    for (let i = 0; i < 20; i++) form.record(1, 64, 64, null);
    form.record(1, 64, 64, true); // full: the next goes along the due index
    form.record(25, 0, 64, false); // short along the due index, 25 ms
    expect(form.next()).toBe(true);
    form.record(0.4, 0, 64, true);
    expect(form.next()).toBe(true);
  });

  test('every 32nd short claim forgets the dearer form, so it is tried again only if the cheaper grows slow', () => {
    const form = new ClaimForm();
    for (let i = 0; i < 20; i++) form.record(1, 64, 64, null);
    form.record(30, 0, 64, true);
    form.record(1, 0, 64, false); // both known: the due index is cheaper
    for (let i = 0; i < 29; i++) form.record(1, 0, 64, form.next());
    expect(form.next()).toBe(false);
    form.record(1, 0, 64, false); // the 32nd short claim: the per-webhook cost is forgotten
    expect(form.next()).toBe(false); // the due index is not slow: no reason to try again
    form.record(40, 0, 64, false); // the backlog left out grew: slow now
    expect(form.next()).toBe(true);
  });

  test('slow is relative to a typical claim: on a database where every claim takes 5 ms, 15 ms is not slow', () => {
    const form = new ClaimForm();
    for (let i = 0; i < 20; i++) form.record(5, 64, 64, null);
    form.record(15, 0, 64, true);
    expect(form.next()).toBe(true);
    form.record(25, 0, 64, true);
    expect(form.next()).toBe(false);
  });
});

describe('claim form: what the full claim left out', () => {
  test('after a full claim, along the due index only for a claim that leaves out no more; one that leaves out more goes per webhook', () => {
    const form = new ClaimForm();
    const one = leftOutKeys(['w1'], []);
    const two = leftOutKeys(['w1', 'w2'], []);
    form.record(1, 64, 64, true, one); // full, leaving out w1
    expect(form.next(one)).toBe(false);
    expect(form.next(leftOutKeys([], []))).toBe(false);
    // w2 reached its bound since: the due rows near the head may all be w1's and w2's.
    expect(form.next(two)).toBe(true);
    expect(form.next(leftOutKeys(['w1'], ['env_b']))).toBe(true);
    form.record(1, 64, 64, true, leftOutKeys(['w1'], ['env_b']));
    expect(form.next(leftOutKeys(['w1'], ['env_b']))).toBe(false);
  });
});
