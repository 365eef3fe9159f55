// Imported first by every entry point, so an older Node stops before anything else loads.
// On Node 20 Baileys' AsyncLocalStorage turns on async hooks for every promise: the service would run,
// several times slower when idle, with nothing saying why.
const required = 24;
const major = Number(process.versions.node.split('.')[0]);

if (major < required) {
  process.stderr.write(
    `This service needs Node.js ${required} or newer; this is ${process.version} (${process.execPath}).\n` +
      `Run it through npm (npm start, npm test, npm run ...), which uses the Node.js ${required} that ` +
      `npm install put in node_modules/.bin, or install Node.js ${required} LTS.\n`,
  );
  process.exit(1);
}
