/** The publisher of this node's event sinks (runtime/sinks/publisher.ts). */
export interface EventSinks {
  start(): void;
  /** Stops publishing, closes the broker connections and hands the sinks held here to the other nodes. */
  stop(): Promise<void>;
  /** A sink was created, changed or deleted here: take it up now instead of at the next poll. */
  changed(): void;
}
