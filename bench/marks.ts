import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Now on the monotonic clock of V8's .cpuprofile files, in µs. */
export const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Records windows of a benchmark's phases: `mark(name, from)` adds [from, now] to the name's list and, when
 * `dir` is set, writes them all to dir/marks.json, to slice .cpuprofile files by phase (bench/cpuprofile.py).
 */
export const profileMarks = (dir: string | undefined): ((name: string, from: number) => void) => {
  const marks: Record<string, Array<[number, number]>> = {};
  return (name, from) => {
    marks[name] ??= [];
    marks[name].push([from, nowUs()]);
    if (dir) writeFileSync(join(dir, 'marks.json'), JSON.stringify(marks, null, 1));
  };
};
