// Types for timer-table.mjs, which runs untranspiled on the timer worker thread.
export interface TimerTable {
  at: (key: string, at: number, job: unknown) => void;
  clear: (key: string) => void;
  clearAll: () => void;
  size: () => number;
}

export declare const createTimerTable: (onDue: (key: string, job: unknown, at: number) => void) => TimerTable;
