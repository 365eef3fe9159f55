import { afterEach, describe, expect, it, vi } from 'vitest';
import { groupCommit } from '../../src/runtime/db/group-commit.ts';

/** A promise the test resolves itself, to hold a write open. */
const gate = () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
};

/** Lets setImmediate callbacks (the end of the current event-loop turn) run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Fake timers, a commit with a 50 ms delay, and 'a' then 'b' added 10 ms apart. */
const delayedGroupOfTwo = () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const write = vi.fn(async (_items: string[]) => {});
  const commit = groupCommit(write, { delayMs: 50 });
  const added = [commit.add('a')];
  vi.advanceTimersByTime(10);
  added.push(commit.add('b'));
  return { write, commit, added };
};

describe('group commit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the items added in one event-loop turn together, in order, and answers each add after that write', async () => {
    const events: string[] = [];
    const hold = gate();
    const write = vi.fn(async (items: string[]) => {
      events.push(`write ${items.join(',')}`);
      await hold.opened;
      events.push('written');
    });
    const commit = groupCommit(write);

    const added = ['a', 'b', 'c'].map((item) => commit.add(item).then(() => events.push(`resolved ${item}`)));
    expect(write).not.toHaveBeenCalled();

    await nextTurn();
    expect(write).toHaveBeenCalledTimes(1);
    expect(write).toHaveBeenCalledWith(['a', 'b', 'c']);
    // The write is still running: nobody has been answered yet.
    await nextTurn();
    expect(events).toEqual(['write a,b,c']);

    hold.open();
    await Promise.all(added);
    expect(write).toHaveBeenCalledTimes(1);
    expect(events).toEqual(['write a,b,c', 'written', 'resolved a', 'resolved b', 'resolved c']);
  });

  it('puts everything that arrives while a write runs into the next single write', async () => {
    const holds = [gate(), gate()];
    const write = vi.fn(async (_items: string[]) => {
      await holds[write.mock.calls.length - 1]?.opened;
    });
    const commit = groupCommit(write);

    const first = commit.add('a');
    await nextTurn();
    expect(write).toHaveBeenCalledTimes(1);

    // Added over several turns while the first write is held open.
    const later = [commit.add('b')];
    await nextTurn();
    later.push(commit.add('c'));
    await nextTurn();
    later.push(commit.add('d'));
    await nextTurn();
    expect(write).toHaveBeenCalledTimes(1);

    holds[0]?.open();
    await first;
    await vi.waitFor(() => expect(write).toHaveBeenCalledTimes(2));
    holds[1]?.open();
    await Promise.all(later);

    expect(write.mock.calls.map(([items]) => items)).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('rejects every add of a failed write with its error, and keeps working afterwards', async () => {
    const failure = new Error('disk full');
    let fail = true;
    const write = vi.fn(async (_items: string[]) => {
      if (fail) throw failure;
    });
    const commit = groupCommit(write);

    const results = await Promise.allSettled([commit.add('x'), commit.add('y')]);
    expect(results).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
    expect(write).toHaveBeenCalledTimes(1);

    fail = false;
    await expect(commit.add('z')).resolves.toBeUndefined();
    expect(write.mock.calls.map(([items]) => items)).toEqual([['x', 'y'], ['z']]);
  });

  it('with a delay, groups items added within it, and settled() writes them without waiting it out', async () => {
    const { write, commit, added } = delayedGroupOfTwo();
    vi.advanceTimersByTime(10);
    added.push(commit.add('c'));
    // setImmediate stays real: a whole event-loop turn passes and the delay still holds the group.
    await nextTurn();
    expect(write).not.toHaveBeenCalled();

    // Fake time stands at 20 ms: only settled() can have started this write.
    await commit.settled();
    expect(write).toHaveBeenCalledTimes(1);
    expect(write).toHaveBeenCalledWith(['a', 'b', 'c']);
    await Promise.all(added);

    // The cancelled timer does not fire a second, empty write.
    vi.advanceTimersByTime(100);
    await nextTurn();
    expect(write).toHaveBeenCalledTimes(1);
  });

  it('with a delay and no settled(), writes the group once the delay has passed', async () => {
    const { write, added } = delayedGroupOfTwo();
    vi.advanceTimersByTime(39);
    await nextTurn();
    expect(write).not.toHaveBeenCalled();

    vi.advanceTimersByTime(1);
    await Promise.all(added);
    expect(write).toHaveBeenCalledTimes(1);
    expect(write).toHaveBeenCalledWith(['a', 'b']);
  });

  it('with isolateFailures, writes a failed group item by item: one bad item fails alone', async () => {
    const write = vi.fn(async (items: string[]) => {
      if (items.includes('bad')) throw new Error(`refused ${items.join(',')}`);
    });
    const commit = groupCommit(write, { isolateFailures: true });
    const results = await Promise.allSettled([commit.add('a'), commit.add('bad'), commit.add('c')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('refused bad'));
    expect(write.mock.calls.map(([items]) => items)).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('without it, a failed group fails every item with the group error', async () => {
    const write = vi.fn(async (items: string[]) => {
      if (items.includes('bad')) throw new Error('refused');
    });
    const commit = groupCommit(write);
    const results = await Promise.allSettled([commit.add('a'), commit.add('bad')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(write).toHaveBeenCalledTimes(1);
  });
});
