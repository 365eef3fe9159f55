/** The spec's in-memory buffer of incoming messages: per session, oldest first, bounded. */
import type { Incoming, IncomingInput, IncomingItem } from './ports/incoming.ts';

interface Queue {
  items: IncomingItem[];
  dropped: number;
  /** the dropped count at which onDrop is called next: 1, 10, 100... so a flood logs a few lines */
  reportAt: number;
  waiters: Set<() => void>;
}

export class IncomingBuffer implements Incoming {
  private nextEventId = 1;
  private readonly queues = new Map<string, Queue>();
  /** every item ever dropped, across sessions (for metrics) */
  droppedTotal = 0;

  constructor(
    private readonly capacity: number,
    private readonly now: () => Date = () => new Date(),
    private readonly onPush?: (item: IncomingItem) => void,
    private readonly onDrop?: (sessionId: string, dropped: number) => void,
  ) {}

  push(sessionId: string, input: IncomingInput): IncomingItem {
    const item = this.prepare(sessionId, input);
    this.add(item);
    return item;
  }

  prepare(sessionId: string, input: IncomingInput): IncomingItem {
    return { eventId: this.nextEventId++, sessionId, ...input, receivedAt: this.now().toISOString() };
  }

  add(item: IncomingItem): void {
    const { sessionId } = item;
    const queue = this.queue(sessionId);
    queue.items.push(item);
    if (queue.items.length > this.capacity) {
      const over = queue.items.length - this.capacity;
      queue.items.splice(0, over);
      queue.dropped += over;
      this.droppedTotal += over;
      if (queue.dropped >= queue.reportAt) {
        while (queue.reportAt <= queue.dropped) queue.reportAt *= 10;
        this.onDrop?.(sessionId, queue.dropped);
      }
    }
    for (const wake of [...queue.waiters]) wake();
    this.onPush?.(item);
  }

  /** Oldest first; with consume, exactly the returned items leave the buffer. */
  read(sessionId: string, limit: number, consume: boolean): IncomingItem[] {
    const queue = this.queues.get(sessionId);
    if (!queue) return [];
    return consume ? queue.items.splice(0, limit) : queue.items.slice(0, limit);
  }

  size(sessionId: string): number {
    return this.queues.get(sessionId)?.items.length ?? 0;
  }

  dropped(sessionId: string): number {
    return this.queues.get(sessionId)?.dropped ?? 0;
  }

  /** Resolves as soon as an item arrives, when `ms` pass, or when the caller goes away. */
  waitForItem(sessionId: string, ms: number, signal?: AbortSignal): Promise<void> {
    const queue = this.queue(sessionId);
    if (queue.items.length > 0 || ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        queue.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      queue.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Shutdown: every waiting long-poll answers now with what it has. */
  wakeAll(): void {
    for (const queue of this.queues.values()) for (const wake of [...queue.waiters]) wake();
  }

  forget(sessionId: string): void {
    const queue = this.queues.get(sessionId);
    if (!queue) return;
    for (const wake of [...queue.waiters]) wake();
    this.queues.delete(sessionId);
  }

  private queue(sessionId: string): Queue {
    let queue = this.queues.get(sessionId);
    if (!queue) {
      queue = { items: [], dropped: 0, reportAt: 1, waiters: new Set() };
      this.queues.set(sessionId, queue);
    }
    return queue;
  }
}
