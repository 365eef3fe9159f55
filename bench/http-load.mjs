// Posts sends on its own thread, as a real client runs on its own machine: the figure is the server's
// cost, not the load generator's.
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './lean-http.mjs';

// `expect`: the status every answer should have (200 unless given: the HTTP floor posts bodies the route refuses).
const { baseUrl, path, key, to, prefix, count, concurrency, expect = 200 } = workerData;

let next = 0;
const failures = [];
const connections = await Promise.all(Array.from({ length: concurrency }, () => openConnection(baseUrl)));
await Promise.all(
  connections.map(async (connection) => {
    while (next < count) {
      const i = next++;
      const { status } = await connection.request('POST', path, { 'x-api-key': key }, { to, message: `${prefix}${i}` });
      if (status !== expect) failures.push(status);
    }
  }),
);
for (const connection of connections) connection.close();
// This thread's CPU since it started (its start included), so the benchmark can tell the load generator's share.
const { user, system } = process.threadCpuUsage();
parentPort.postMessage({ failures, cpuMs: (user + system) / 1000 });
