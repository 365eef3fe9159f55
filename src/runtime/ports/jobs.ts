export interface RecurringSpec {
  timerId: string;
  accountId: string;
  sessionId: string;
  everyMs: number;
  /** what to send each time, as the resolver that created it understands it */
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** Timers for scheduled and recurring sends (runtime/jobs/scheduler.ts). */
export interface Jobs {
  /** when this scheduler (so this process's jobs) started, ms since the epoch */
  readonly startedAt: number;
  scheduleMessage(jobId: string, messageId: string, at: Date): Promise<void>;
  addRecurring(spec: RecurringSpec): Promise<void>;
  recurringSpec(timerId: string): RecurringSpec | undefined;
  listRecurring(sessionId: string): RecurringSpec[];
  countRecurring(accountId: string): number;
  cancelRecurring(timerId: string): Promise<boolean>;
  cancelSession(sessionId: string): Promise<void>;
  stop(): Promise<void>;
}
