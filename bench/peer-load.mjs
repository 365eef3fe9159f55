// The load generator of `npm run bench -- peers`, on its own thread so that its work is neither
// product's: `concurrency` keep-alive connections (lean-http.mjs) each take the next request of a job
// until none is left. A job is a list of requests, each its own path and JSON body (texts spread over
// the linked sessions of one product); it answers with the statuses that differed from `expect`.
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './lean-http.mjs';

const { baseUrl, headers, concurrency } = workerData;
const connections = await Promise.all(Array.from({ length: concurrency }, () => openConnection(baseUrl)));

parentPort.on('message', async (job) => {
  if (job === 'close') {
    for (const connection of connections) connection.close();
    parentPort.close();
    return;
  }
  const { requests, expect } = job;
  let next = 0;
  const failures = [];
  await Promise.all(
    connections.map(async (connection) => {
      while (next < requests.length) {
        const { path, body } = requests[next++];
        try {
          const { status, body: answer } = await connection.request('POST', path, headers, body);
          if (status !== expect) failures.push(`${status} ${answer.toString('utf8').slice(0, 200)}`);
        } catch (err) {
          failures.push(String(err));
        }
      }
    }),
  );
  parentPort.postMessage({ failures });
});
parentPort.postMessage('ready');
