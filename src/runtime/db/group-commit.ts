/**
 * Group commit: items added close together are written together in one statement. Each statement
 * costs far more than a row, so concurrent requests share it. One write runs at a time; what arrives
 * meanwhile goes into the next one.
 */
export interface GroupCommit<T> {
  /** Resolves once the item is written, or rejects with the error of the write that carried it. */
  add: (item: T) => Promise<void>;
  /** Writes what waits now (without waiting out a delay) and resolves once everything added so far is written or failed. */
  settled: () => Promise<void>;
}

export interface GroupCommitOptions {
  /**
   * How long the first item of a group may wait for others. Without it the group closes at the end of
   * the event-loop turn, after the I/O callbacks of that turn, so requests read together share it.
   */
  delayMs?: number;
  /**
   * When a group's write fails, write each of its items alone, so that one item's failure (a row that
   * breaks a constraint) is its own and the others land.
   */
  isolateFailures?: boolean;
}

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export const groupCommit = <T>(write: (items: T[]) => Promise<void>, options: GroupCommitOptions = {}): GroupCommit<T> => {
  let queue: Array<Waiting<T>> = [];
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | NodeJS.Immediate | null = null;

  const cancelTimer = () => {
    if (timer === null) return;
    if (options.delayMs === undefined) clearImmediate(timer as NodeJS.Immediate);
    else clearTimeout(timer as NodeJS.Timeout);
    timer = null;
  };

  const run = (): Promise<void> => {
    cancelTimer();
    if (running) return running;
    running = (async () => {
      while (queue.length > 0) {
        const batch = queue;
        queue = [];
        try {
          await write(batch.map((w) => w.item));
          for (const w of batch) w.resolve();
        } catch (err) {
          if (!options.isolateFailures || batch.length === 1) for (const w of batch) w.reject(err);
          else
            for (const w of batch) {
              try {
                await write([w.item]);
                w.resolve();
              } catch (alone) {
                w.reject(alone);
              }
            }
        }
      }
    })().finally(() => {
      running = null;
      if (queue.length > 0) schedule();
    });
    return running;
  };

  const schedule = () => {
    if (running || timer !== null) return;
    timer = options.delayMs === undefined ? setImmediate(run) : setTimeout(run, options.delayMs);
  };

  return {
    add: (item) =>
      new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      }),
    settled: async () => {
      while (running || queue.length > 0) await run();
    },
  };
};
