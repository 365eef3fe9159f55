// Loaded into the service by the memory benchmark (MEMORY_BENCH_AFTER_NODE_ARGS='--import ./bench/heap-sampler.mjs',
// HEAP_SAMPLER_DIR=<dir>): V8's sampling heap profiler on the main thread, garbage included (what was
// allocated, not only what stayed), one profile per HEAP_SAMPLER_SECONDS window written as
// <dir>/<pid>-<seconds since start>.heapprofile, for bench/heapprofile.py. Stops when the process does.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

const dir = process.env.HEAP_SAMPLER_DIR;
const seconds = Number(process.env.HEAP_SAMPLER_SECONDS ?? 30);
if (dir && process.env.GLIBC_TUNABLES !== undefined) {
  // (the service starts itself again once with GLIBC_TUNABLES set: sampling starts in that process)
  const session = new Session();
  session.connect();
  const start = () =>
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  const began = Date.now();
  await start();
  const timer = setInterval(async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(join(dir, `${process.pid}-${Math.round((Date.now() - began) / 1000)}.heapprofile`), JSON.stringify(profile));
    await start();
  }, seconds * 1000);
  timer.unref();
}
