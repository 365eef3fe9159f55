import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface SandboxProcess {
  controlUrl: string;
  child: ChildProcess;
  /** SIGTERM, then waits for the exit */
  stop: () => Promise<void>;
}

/** The sandbox network in a process of its own (`npm run sandbox` from the sources), its control API on a free loopback port. */
export const startSandboxProcess = async (): Promise<SandboxProcess> => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/runtime/sandbox/main.ts'], {
    env: { ...process.env, SANDBOX_PORT: '0', SANDBOX_CONTROL_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const controlUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /Control API: (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    void exited.then(() => reject(new Error(`sandbox exited:\n${out}`)));
  });
  return {
    controlUrl,
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
};
