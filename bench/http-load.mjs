// Runs on its own thread, as a real client runs on its own machine: the figure is the server's cost,
// not the load generator's. Plain .mjs so the worker needs no TypeScript loader.
// The client is a lean HTTP/1.1 keep-alive one over plain sockets (one request at a time per
// connection, no pipelining), as wrk is: on a two-core machine Node's own http client took about a
// tenth of the CPU the server needed, time the server then did not get.
import { connect } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const { baseUrl, path, key, to, prefix, count, concurrency } = workerData;
const { hostname, port } = new URL(baseUrl);
const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection; `post` resolves with the status code once the whole answer is read. */
const openConnection = () =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), noDelay: true });
    let buffered = Buffer.alloc(0);
    let waiting = null;
    const readAnswer = () => {
      const end = buffered.indexOf(HEADER_END);
      if (end < 0 || !waiting) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (!length) {
        waiting.reject(new Error(`answer without Content-Length: ${head.split('\r\n')[0]}`));
        return;
      }
      const total = end + HEADER_END.length + Number(length[1]);
      if (buffered.length < total) return;
      buffered = buffered.subarray(total);
      const done = waiting;
      waiting = null;
      done.resolve(Number(head.slice(9, 12)));
    };
    socket.on('data', (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      readAnswer();
    });
    socket.on('error', (err) => {
      if (waiting) waiting.reject(err);
      reject(err);
    });
    socket.on('close', () => waiting?.reject(new Error('connection closed before the answer')));
    socket.once('connect', () =>
      resolve({
        post: (body) =>
          new Promise((res, rej) => {
            waiting = { resolve: res, reject: rej };
            const data = JSON.stringify(body);
            socket.write(
              `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(data)}\r\nx-api-key: ${key}\r\n\r\n${data}`,
            );
          }),
        close: () => socket.destroy(),
      }),
    );
  });

let next = 0;
const failures = [];
const connections = await Promise.all(Array.from({ length: concurrency }, openConnection));
await Promise.all(
  connections.map(async (connection) => {
    while (next < count) {
      const i = next++;
      const status = await connection.post({ to, message: `${prefix}${i}` });
      if (status !== 200) failures.push(status);
    }
  }),
);
for (const connection of connections) connection.close();
parentPort.postMessage({ failures });
