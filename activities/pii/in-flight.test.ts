import { runInFlight } from './in-flight';

describe('runInFlight', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

  it('runs every item, never more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await runInFlight([1, 2, 3, 4, 5], 2, async (n) => {
      most = Math.max(most, ++running);
      await tick();
      done.push(n);
      running--;
    });
    expect(most).toBe(2);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('starts nothing after a failure, lets the running items finish, then throws the failure', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const run = runInFlight([1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      if (n === 1) throw new Error('frame 1 failed');
      await tick();
      finished.push(n);
    });
    await expect(run).rejects.toThrow('frame 1 failed');
    expect(started).toEqual([1, 2]);
    expect(finished).toEqual([2]);
  });
});
