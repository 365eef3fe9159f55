import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface ServiceProcess {
  baseUrl: string;
  child: ChildProcess;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Runs the service as `npm start` does (the compiled dist/runtime/root/main.js), on a free port, and waits until it listens. */
export const spawnService = async (env: Record<string, string>, options: { startMs?: number } = {}): Promise<ServiceProcess> => {
  // SERVICE_NODE_ARGS (in `env`, else this process's): options for the service's Node.js alone (a benchmark's --cpu-prof, which NODE_OPTIONS refuses).
  const nodeArgs = (env.SERVICE_NODE_ARGS ?? process.env.SERVICE_NODE_ARGS)?.split(' ').filter(Boolean) ?? [];
  // SERVICE_RUNTIME: another JavaScript runtime for the service (the peers benchmark's Bun evaluation).
  // Sends leave at once unless a test turns the pacer on (test/pacing.test.ts).
  const child = spawn(process.env.SERVICE_RUNTIME ?? process.execPath, [...nodeArgs, 'dist/runtime/root/main.js'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SEND_PACING: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    // On a machine shared with other work, migrating a fresh database alone took 7 s.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start:\n${out}`));
    }, options.startMs ?? 60_000);
    const check = () => {
      const match = /"port":(\d+),[^\n]*"msg":"listening"/.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', check);
    void exited.then(() => reject(new Error(`service exited:\n${out}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
};
