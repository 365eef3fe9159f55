// A long-lived Bree worker that keeps every job's timer. It only announces that a job is due; the main
// thread, which owns the network sockets, claims the job in the database and sends. A worker never
// holds a socket.
import { parentPort } from 'node:worker_threads';

const timers = new Map();

const clear = (key) => {
  const timer = timers.get(key);
  if (timer) {
    clearTimeout(timer.handle);
    clearInterval(timer.handle);
    timers.delete(key);
  }
};

parentPort?.on('message', (command) => {
  if (command === 'cancel') return;
  switch (command?.type) {
    case 'at': {
      clear(command.key);
      const fire = () => {
        timers.delete(command.key);
        parentPort?.postMessage({ type: 'due', key: command.key, job: command.job, at: command.at });
      };
      const delay = command.at - Date.now();
      if (delay <= 0) fire();
      else timers.set(command.key, { handle: setTimeout(fire, delay) });
      break;
    }
    case 'every':
      clear(command.key);
      timers.set(command.key, {
        handle: setInterval(() => parentPort?.postMessage({ type: 'due', key: command.key, job: command.job }), command.everyMs),
      });
      break;
    case 'clear':
      clear(command.key);
      break;
    case 'stop':
      for (const key of [...timers.keys()]) clear(key);
      process.exit(0);
      break;
    default:
      break;
  }
});
