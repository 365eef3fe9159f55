/** Timers for scheduled and recurring sends (runtime/jobs/scheduler.ts). */
export interface Jobs {
  /** when this scheduler (so this process's jobs) started, ms since the epoch */
  readonly startedAt: number;
  scheduleMessage(jobId: string, messageId: string, at: Date): Promise<void>;
  /**
   * Arms the next occurrence of a recurring timer (a RecurringTimer row) at `at`, or at once when `at`
   * has passed; arming it again moves it. The row decides what fires: this only says when to look.
   */
  armRecurring(timerId: string, sessionId: string, at: Date): Promise<void>;
  /** Disarms a recurring timer here (it was cancelled, or its session moved away or was deleted). */
  disarmRecurring(timerId: string): Promise<void>;
  /** Disarms every recurring timer of the session armed here. */
  disarmSession(sessionId: string): Promise<void>;
  /** Disarms every job armed here for these records (their session moved to another node). */
  disarmMessages(messageIds: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}
