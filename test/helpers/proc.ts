import { readFileSync, readdirSync } from 'node:fs';

// Linux's /proc, read by the tests and benchmarks that look at the service from outside: its network
// process, and the memory and CPU of the two together.
const CLOCK_TICKS = 100;

const stat = (pid: number): string[] | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // after "pid (comm) ": state, ppid, ... (comm may hold spaces and parentheses)
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
};

/** Whether a process exists and has not exited (a zombie waiting to be reaped counts as exited). */
export const isRunning = (pid: number): boolean => {
  const fields = stat(pid);
  return fields !== undefined && fields[0] !== 'Z' && fields[0] !== 'X';
};

/** The running processes whose parent is pid. */
export const childPids = (pid: number): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      const fields = stat(child);
      return fields !== undefined && Number(fields[1]) === pid && fields[0] !== 'Z';
    });

export interface ProcessUsage {
  pid: number;
  /** user + system CPU seconds, all threads */
  cpu: number;
  rssMb: number;
}

/** CPU and resident memory of one process (zero when it is gone). */
export const processUsage = (pid: number): ProcessUsage => {
  const fields = stat(pid);
  let rssKb = 0;
  try {
    rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    // gone
  }
  return { pid, cpu: fields ? (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS : 0, rssMb: rssKb / 1024 };
};

/** A process and its descendants (the service and its network process), each, then their sum. */
export const treeUsage = (pid: number): { total: { cpu: number; rssMb: number }; processes: ProcessUsage[] } => {
  const processes: ProcessUsage[] = [];
  const visit = (p: number) => {
    processes.push(processUsage(p));
    for (const child of childPids(p)) visit(child);
  };
  visit(pid);
  return {
    total: { cpu: processes.reduce((n, p) => n + p.cpu, 0), rssMb: processes.reduce((n, p) => n + p.rssMb, 0) },
    processes,
  };
};
