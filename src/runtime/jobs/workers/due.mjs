// A Bree worker: it only announces that its job is due. The main thread owns the network sockets,
// claims the job in the database and sends; a worker never holds a socket.
import { parentPort, workerData } from 'node:worker_threads';

parentPort?.postMessage({ type: 'due', job: workerData?.job ?? null });
