// Imported first by every entry point, so an older Node stops before anything else loads.
// On Node 20 Baileys' AsyncLocalStorage turns on async hooks for every promise: the service would run,
// several times costlier when idle, with nothing saying why.
export const REQUIRED_NODE_MAJOR = 24;

/** The message to stop with when this Node is too old, or null. */
export const nodeVersionProblem = (version: string, execPath: string): string | null => {
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return null;
  return (
    `This service needs Node.js ${REQUIRED_NODE_MAJOR} or newer; this is ${version} (${execPath}).\n` +
    `Run it through npm (npm start, npm test, npm run ...), which uses the Node.js ${REQUIRED_NODE_MAJOR} ` +
    `that npm install put in node_modules/.bin, or install Node.js ${REQUIRED_NODE_MAJOR} LTS.\n`
  );
};

const problem = nodeVersionProblem(process.version, process.execPath);
if (problem) {
  process.stderr.write(problem);
  process.exit(1);
}
