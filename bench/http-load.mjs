// Posts sends on its own thread, as a real client runs on its own machine: the figure is the server's
// cost, not the load generator's. One thread for the whole benchmark, its connections kept open, as
// the bare socket's thread is: a thread started per round charged its start to that round.
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './lean-http.mjs';

const { baseUrl, key, concurrency } = workerData;
const connections = await Promise.all(Array.from({ length: concurrency }, () => openConnection(baseUrl)));

const cpuMs = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

// A job: `count` POSTs to `path`; `expect` is the status every answer should have (the HTTP-only
// rounds post bodies the route refuses); `field` names the text's field (`message` for /send, `text` for
// the sandbox's control API, whose phones send). Answers with the failures and the CPU this thread spent on it.
parentPort.on('message', async (job) => {
  if (job === 'close') {
    for (const connection of connections) connection.close();
    parentPort.close();
    return;
  }
  const { path, to, prefix, count, expect, field = 'message' } = job;
  const from = cpuMs();
  let next = 0;
  const failures = [];
  await Promise.all(
    connections.map(async (connection) => {
      while (next < count) {
        const i = next++;
        const { status } = await connection.request('POST', path, { 'x-api-key': key }, { to, [field]: `${prefix}${i}` });
        if (status !== expect) failures.push(status);
      }
    }),
  );
  parentPort.postMessage({ failures, cpuMs: cpuMs() - from });
});
parentPort.postMessage('ready');
