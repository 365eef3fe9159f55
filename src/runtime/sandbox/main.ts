import '../node-version.ts';
import { pino } from 'pino';
import { routeLibsignalConsole } from '../libsignal-console.ts';
import { startSandbox } from './sandbox.ts';

// `npm run sandbox`: the offline WhatsApp network on its own, for services started with WA_SANDBOX_URL.
// `npm run sandbox -- --bartender` (or SANDBOX_BARTENDER=true) also serves Baileys' mock-server layout.
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' });
const bartender = process.argv.includes('--bartender') || process.env.SANDBOX_BARTENDER === 'true';
routeLibsignalConsole(logger);
const sandbox = await startSandbox({
  port: Number(process.env.SANDBOX_PORT ?? 4010),
  controlPort: Number(process.env.SANDBOX_CONTROL_PORT ?? 4011),
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  logger,
  ...(bartender
    ? {
        bartender: {
          port: Number(process.env.SANDBOX_BARTENDER_PORT ?? 8080),
          advSecretKey: process.env.ADV_SECRET_KEY || undefined,
          caFile: process.env.SANDBOX_BARTENDER_CA_FILE || undefined,
        },
      }
    : {}),
});
process.stdout.write(
  `Sandbox WhatsApp network\n  WebSocket:   ${sandbox.wsUrl}\n  Control API: ${sandbox.controlUrl}\n` +
    `Start the service against it with WA_SANDBOX_URL=${sandbox.controlUrl}\n`,
);
if (sandbox.bartender) {
  process.stdout.write(
    `Bartender layout (for Baileys clients of your own)\n  SOCKET_URL=${sandbox.bartender.url}\n  QR scan:     POST ${sandbox.bartender.adminUrl}\n` +
      (process.env.SANDBOX_BARTENDER_CA_FILE ? `  Certificate: ${process.env.SANDBOX_BARTENDER_CA_FILE}\n` : ''),
  );
}
const stop = () => {
  void sandbox.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
