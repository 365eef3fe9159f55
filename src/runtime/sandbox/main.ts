import '../node-version.ts';
import { routeLibsignalConsole } from '../libsignal-console.ts';
import { createLogger } from '../logger.ts';
import { loadSandboxSettings } from '../settings.ts';
import { startSandbox } from './sandbox.ts';

// `npm run sandbox`: the offline WhatsApp network on its own, for services started with WA_SANDBOX_URL.
// `npm run sandbox -- --bartender` (or SANDBOX_BARTENDER=true) also serves Baileys' mock-server layout.
const settings = loadSandboxSettings();
const logger = createLogger(settings.logLevel);
routeLibsignalConsole(logger);
const sandbox = await startSandbox({
  port: settings.port,
  controlPort: settings.controlPort,
  host: settings.host,
  logger,
  addressing: settings.addressing,
  ...(settings.bartender ? { bartender: settings.bartender } : {}),
});
process.stdout.write(
  `Sandbox WhatsApp network\n  WebSocket:   ${sandbox.wsUrl}\n  Control API: ${sandbox.controlUrl}\n` +
    `  Addressing:  ${sandbox.addressing} (SANDBOX_ADDRESSING=lid|pn)\n` +
    `Start the service against it with WA_SANDBOX_URL=${sandbox.controlUrl}\n`,
);
if (sandbox.bartender) {
  process.stdout.write(
    `Bartender layout (for Baileys clients of your own)\n  SOCKET_URL=${sandbox.bartender.url}\n  QR scan:     POST ${sandbox.bartender.adminUrl}\n` +
      (settings.bartender?.caFile ? `  Certificate: ${settings.bartender.caFile}\n` : ''),
  );
}
const stop = () => {
  void sandbox.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
