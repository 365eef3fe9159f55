// The long-poll client on its own thread, as a real client runs on its own process or machine, so the
// service's main thread does not also parse the answers. For each 'poll' message it sends one GET,
// tells when the request is out, and reports the answer's item count and the moment (process.hrtime,
// the same clock in every thread) its last byte was read.
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './lean-http.mjs';

const { baseUrl, path, key } = workerData;
const connection = await openConnection(baseUrl);

parentPort.on('message', async (message) => {
  if (message === 'close') {
    connection.close();
    parentPort.close();
    return;
  }
  const answer = connection.request('GET', path, { 'x-api-key': key });
  parentPort.postMessage({ kind: 'sent' });
  const { status, body } = await answer;
  const at = process.hrtime.bigint();
  const count = status === 200 ? JSON.parse(body.toString()).count : -status;
  parentPort.postMessage({ kind: 'answer', count, at });
});
parentPort.postMessage({ kind: 'ready' });
