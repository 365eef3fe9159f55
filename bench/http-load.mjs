// Runs on its own thread, as a real client runs on its own machine: the figure is the server's cost,
// not the load generator's. Plain .mjs so the worker needs no TypeScript loader.
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { baseUrl, path, key, to, prefix, count, concurrency } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

const post = (body) =>
  new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = request(`${baseUrl}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(data);
  });

let next = 0;
const failures = [];
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      const status = await post({ to, message: `${prefix}${i}` });
      if (status !== 200) failures.push(status);
    }
  }),
);
agent.destroy();
parentPort.postMessage({ failures });
