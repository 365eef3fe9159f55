// A long-lived Bree worker that keeps every job's timer. It only announces that a job is due; the main
// thread, which owns the network sockets, claims the job in the database and sends. A worker never
// holds a socket.
import { parentPort } from 'node:worker_threads';
import { createTimerTable } from './timer-table.mjs';

const table = createTimerTable((key, job, at) => parentPort?.postMessage({ type: 'due', key, job, at }));

parentPort?.on('message', (command) => {
  if (command === 'cancel') return;
  switch (command?.type) {
    case 'at':
      table.at(command.key, command.at, command.job);
      break;
    case 'clear':
      table.clear(command.key);
      break;
    case 'stop':
      table.clearAll();
      process.exit(0);
      break;
    default:
      break;
  }
});
