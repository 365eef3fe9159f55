// The timer worker's table of one-shot timers, kept apart from the thread so a unit test can run it
// under a fake clock. safe-timers (what Bree itself uses) splits a wait longer than Node's limit
// (2^31-1 ms, about 24.8 days; a longer setTimeout fires at once) into steps and checks the clock at
// each step, so a timer fires at its time however far away, never early.
import safeTimers from 'safe-timers';

/** `onDue(key, job, at)` is called once per armed timer, at or after `at` (ms since the epoch). */
export const createTimerTable = (onDue) => {
  const timers = new Map();
  const clear = (key) => {
    const timer = timers.get(key);
    if (!timer) return;
    timer.clear();
    timers.delete(key);
  };
  return {
    /** Arms (or re-arms) `key` for `at`; a time already past fires at once. */
    at: (key, at, job) => {
      clear(key);
      const fire = () => {
        timers.delete(key);
        onDue(key, job, at);
      };
      if (at <= Date.now()) fire();
      else timers.set(key, safeTimers.setTimeoutAt(fire, at));
    },
    clear,
    clearAll: () => {
      for (const key of [...timers.keys()]) clear(key);
    },
    size: () => timers.size,
  };
};
