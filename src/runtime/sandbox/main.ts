import '../node-version.ts';
import { pino } from 'pino';
import { routeLibsignalConsole } from '../libsignal-console.ts';
import { startSandbox } from './sandbox.ts';

// `npm run sandbox`: the offline WhatsApp network on its own, for services started with WA_SANDBOX_URL.
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' });
routeLibsignalConsole(logger);
const sandbox = await startSandbox({
  port: Number(process.env.SANDBOX_PORT ?? 4010),
  controlPort: Number(process.env.SANDBOX_CONTROL_PORT ?? 4011),
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  logger,
});
process.stdout.write(
  `Sandbox WhatsApp network\n  WebSocket:   ${sandbox.wsUrl}\n  Control API: ${sandbox.controlUrl}\n` +
    `Start the service against it with WA_SANDBOX_URL=${sandbox.controlUrl}\n`,
);
const stop = () => {
  void sandbox.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
