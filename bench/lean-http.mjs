// A lean HTTP/1.1 keep-alive client over a plain socket (one request at a time, no pipelining), as wrk
// is: on a two-core machine Node's own http client took about a tenth of the CPU the server needed,
// time the server then did not get. Plain .mjs so worker threads need no TypeScript loader.
import { connect } from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Opens one connection; `request` resolves with the status and body once the whole answer is read.
 * The server closes a connection left idle past its keep-alive timeout (5 s, longer than some of the
 * benchmark's other rounds): the next request then opens a new one, as wrk does.
 */
export const openConnection = async (baseUrl) => {
  const { hostname, port } = new URL(baseUrl);
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
    const body = buffered.subarray(end + HEADER_END.length, total);
    buffered = buffered.subarray(total);
    const done = waiting;
    waiting = null;
    done.resolve({ status: Number(head.slice(9, 12)), body });
  };
  const open = () =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port), noDelay: true });
      buffered = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        readAnswer();
      });
      socket.on('error', (err) => {
        if (waiting) waiting.reject(err);
        reject(err);
      });
      socket.on('close', () => waiting?.reject(new Error('connection closed before the answer')));
      socket.once('connect', () => resolve(socket));
    });
  let socket = await open();
  return {
    /** `body`, when given, is sent as JSON. */
    request: async (method, path, headers, body) => {
      if (socket.destroyed || socket.readyState !== 'open') socket = await open();
      return new Promise((res, rej) => {
        waiting = { resolve: res, reject: rej };
        const data = body === undefined ? '' : JSON.stringify(body);
        const lines = Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('');
        const framing = body === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(data)}\r\n`;
        socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${framing}${lines}\r\n${data}`);
      });
    },
    close: () => socket.destroy(),
  };
};
