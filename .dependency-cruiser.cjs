// `npm run lint` runs this over src/: no import cycles, and imports only along the layer order
//   rest, schema -> resolvers -> runtime/ports (types) <- runtime infrastructure <- runtime/root
// (see README "Layers"). Tests, bench/ and scripts/ may import anything.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle, type-only imports included: split the shared part into its own module or pass it in.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or an installed package.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'outside-runtime-only-ports',
      severity: 'error',
      comment:
        'rest, schema and resolvers see the infrastructure only through the port types in src/runtime/ports/ (and the settings type); the implementations are wired in src/runtime/root/deps.ts.',
      from: { path: '^src/(resolvers|schema|rest)/' },
      to: { path: '^src/runtime/', pathNot: '^src/runtime/(ports/|settings\\.ts$)' },
    },
    {
      name: 'resolvers-below-doors',
      severity: 'error',
      comment: 'The domain logic does not know its two doors: GraphQL (src/schema) and REST (src/rest).',
      from: { path: '^src/resolvers/' },
      to: { path: '^src/(schema|rest)/' },
    },
    {
      name: 'doors-apart',
      severity: 'error',
      comment: 'REST and GraphQL call the same resolvers and never each other.',
      from: { path: '^src/(schema|rest)/' },
      to: { path: '^src/(schema|rest)/', pathNot: '^src/$1/' },
    },
    {
      name: 'resolvers-framework-free',
      severity: 'error',
      comment: 'Resolvers are plain functions: no Express, GraphQL, Pothos, yoga or Baileys.',
      from: { path: '^src/resolvers/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        path: 'node_modules/(express|graphql|graphql-yoga|@pothos|baileys)/',
      },
    },
    {
      name: 'infrastructure-below-domain',
      severity: 'error',
      comment:
        'Runtime infrastructure never imports resolvers, schema, rest or the composition root; domain logic it needs (scheduled sends, refused-message handling, URL rules) is passed in by src/runtime/root/.',
      from: { path: '^src/runtime/', pathNot: '^src/runtime/root/' },
      to: { path: '^src/(resolvers/|schema/|rest/|runtime/root/)' },
    },
    {
      name: 'ports-are-leaves',
      severity: 'error',
      comment:
        'Port modules declare types only and depend on nothing of ours but other ports, the settings and the generated Prisma types.',
      from: { path: '^src/runtime/ports/' },
      to: { path: '^src/', pathNot: '^src/(runtime/ports/|runtime/settings\\.ts$|generated/)' },
    },
    {
      name: 'ports-imported-as-types',
      severity: 'error',
      comment: 'Ports hold types only, so every import of one is `import type`.',
      from: {},
      to: { path: '^src/runtime/ports/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'root-is-entry-only',
      severity: 'error',
      comment: 'Only tests, bench/ and scripts/ import the composition root (app, main, graphql, deps, cli).',
      from: { path: '^src/', pathNot: '^src/runtime/root/' },
      to: { path: '^src/runtime/root/' },
    },
    {
      name: 'baileys-behind-the-port',
      severity: 'error',
      comment:
        'Only the Baileys implementation of the network port (src/runtime/network/baileys-*.ts, its auth-state store) and the sandbox import baileys.',
      from: { pathNot: '^src/runtime/(network/(baileys-[^/]+|auth-store)\\.ts$|sandbox/)' },
      to: { path: 'node_modules/baileys/' },
    },
    {
      name: 'libsignal-behind-the-port',
      severity: 'error',
      comment: 'libsignal is patched in one place for the network (network/libsignal-fix.ts) and used directly only by the sandbox.',
      from: { pathNot: '^src/runtime/(network/libsignal-fix\\.ts$|sandbox/)' },
      to: { path: 'node_modules/libsignal/' },
    },
  ],
  options: {
    includeOnly: '^(src/|node_modules/)',
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    // type-only imports count: a cycle through types is still a cycle in the design
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
