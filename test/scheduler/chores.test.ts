import { expect, test } from 'vitest';
import { type Chore, Chores } from '../../src/scheduler/chores.js';

function gated(result: boolean | Error) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let runs = 0;
  const chore: Chore = {
    async runIfDue() {
      runs++;
      await gate;
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { chore, open, runs: () => runs };
}

test('each chore runs once at a time; runs that wrote or failed are counted; failures are reported', async () => {
  const errors: string[] = [];
  const wrote = gated(true);
  const idle = gated(false);
  const broken = gated(new Error('boom'));
  const chores = new Chores([wrote.chore, idle.chore, broken.chore], (message) => errors.push(message));
  let ended = 0;
  chores.start(() => ended++);
  chores.start(() => ended++); // all still running: none starts twice
  expect([wrote.runs(), idle.runs(), broken.runs()]).toEqual([1, 1, 1]);
  expect(chores.runs.size).toBe(3);
  wrote.open();
  idle.open();
  broken.open();
  await Promise.all([...chores.runs]);
  expect(ended).toBe(3);
  expect(chores.runs.size).toBe(0);
  expect(chores.writes).toBe(2);
  expect(errors).toEqual(['a background task of the scheduler failed']);
  chores.start(() => ended++);
  expect(wrote.runs()).toBe(2);
  await Promise.all([...chores.runs]);
});
