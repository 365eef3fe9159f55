import { performance } from 'node:perf_hooks';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

type Gc = (options: { type: 'major'; execution: 'sync'; flavor?: 'regular' | 'last-resort' }) => void;
let gc: Gc | undefined;
const MB = 1024 * 1024;

const exposedGc = (): Gc => {
  if (!gc) {
    // A context made after the flag is set has `gc`; nothing else in the process sees it.
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as Gc;
  }
  return gc;
};

/**
 * V8's memory-reducing full collection of this thread's heap: everything collectable, then the pages V8
 * keeps pooled for reuse given back to the system. A regular collection leaves the pool, which after
 * sustained traffic held most of the service's growth (the soak: 505 → 643 MB after a regular
 * collection, 357 → 369 MB after this one).
 */
export const collectAllGarbage = (): void => {
  exposedGc()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
};

/**
 * For a long busy stretch made of steps, each leaving garbage that outlived the young generation (a
 * history chunk: thousands of decoded messages held while they are written): called between steps, it
 * runs one regular full collection once this thread's heap has grown by `growthBytes` since the last.
 * V8 left alone lets the old generation grow several times its live size before collecting it (a
 * 50,000-message history sync: +357 MB of heap, 102 MB live), which is what a machine must be sized for.
 */
export const heapGrowthCollector = (growthBytes: number, used: () => number = () => process.memoryUsage().heapUsed): (() => boolean) => {
  let base = used();
  return () => {
    const now = used();
    if (now - base < growthBytes) {
      base = Math.min(base, now);
      return false;
    }
    exposedGc()({ type: 'major', execution: 'sync' });
    base = used();
    return true;
  };
};

interface Measures {
  collect: () => void;
  rss: () => number;
  now: () => number;
}
const measured: Measures = { collect: collectAllGarbage, rss: () => process.memoryUsage.rss(), now: () => performance.now() };

/** One collection, logged with what it gave back; returns the process's size after it. */
const collectLogged = (logger: Logger, level: 'info' | 'debug', message: string, { collect, rss, now }: Measures): number => {
  const before = rss();
  const started = now();
  collect();
  const after = rss();
  logger[level]({ rssBeforeMb: Math.round(before / MB), rssAfterMb: Math.round(after / MB), ms: Math.round(now() - started) }, message);
  return after;
};

/** One memory-reducing collection now, logged with what it gave back (the quiet moment right after start). */
export const giveMemoryBack = (logger: Logger, message: string): void => {
  collectLogged(logger, 'info', message, measured);
};

export interface MemoryReclaimOptions {
  logger: Logger;
  /** how often the thread looks at its activity and the process's memory */
  checkEveryMs?: number;
  /** the share of the last check's interval this thread's event loop may have been busy and still count as quiet */
  quietBelow?: number;
  /** how far the process's resident memory must have grown since the last collection (or its low point) */
  growthBytes?: number;
  /** the shortest time between two collections */
  minGapMs?: number;
  /** for tests: the process's resident memory, the event loop's busy share since the last call, the collection */
  rss?: () => number;
  utilization?: () => number;
  collect?: () => void;
  now?: () => number;
}

const utilizationSinceLastCall = (): (() => number) => {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const current = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(current, last).utilization;
    last = current;
    return share;
  };
};

/**
 * Gives memory back once a busy period is over: when this thread's event loop was quiet over the last
 * check and the process grew by `growthBytes` since the last collection, one memory-reducing collection
 * runs (tens of milliseconds; never while the thread is busy). Each thread that holds a V8 heap (the
 * main thread, the network thread or process) runs its own.
 */
export const createMemoryReclaim = (options: MemoryReclaimOptions) => {
  const rss = options.rss ?? measured.rss;
  const utilization = options.utilization ?? utilizationSinceLastCall();
  const collect = options.collect ?? measured.collect;
  const now = options.now ?? measured.now;
  const quietBelow = options.quietBelow ?? 0.1;
  // Linking a session leaves 10–15 MB that a collection gives back (196 → 183 MB after one link), more
  // than the link itself keeps (docs/benchmarks-peers.md).
  const growthBytes = options.growthBytes ?? 8 * MB;
  const minGapMs = options.minGapMs ?? 60_000;
  let baseline = rss();
  let lastAt = Number.NEGATIVE_INFINITY;
  return {
    /** one check; true when it collected */
    check: (): boolean => {
      const busy = utilization();
      const before = rss();
      // Memory given back otherwise (another thread's collection, V8's own) lowers the mark.
      baseline = Math.min(baseline, before);
      if (busy >= quietBelow || before - baseline < growthBytes || now() - lastAt < minGapMs) return false;
      // Routine, after every busy period: an operator follows memory in the metrics, not in this line.
      baseline = collectLogged(options.logger, 'debug', 'quiet after a busy period: memory given back', { collect, rss, now });
      lastAt = now();
      return true;
    },
  };
};

/** Starts the checks on this thread; the returned function stops them. */
export const startMemoryReclaim = (options: MemoryReclaimOptions): (() => void) => {
  const reclaim = createMemoryReclaim(options);
  const timer = setInterval(() => {
    try {
      reclaim.check();
    } catch (err) {
      options.logger.warn({ err }, 'giving memory back failed');
    }
  }, options.checkEveryMs ?? 10_000);
  timer.unref();
  return () => clearInterval(timer);
};
