// The dependency rules of docs/architecture.md#dependency-rules that are about the shape of the
// import graph (the layer rules live in eslint.config.js): no module may reach itself again
// through what it imports at run time, and migrations are frozen.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle of modules: one of them must move, or the shared part become its own module (docs/architecture.md#dependency-rules).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'migrations-frozen',
      severity: 'error',
      comment: 'A migration creates the same schema whenever it runs: it uses Kysely and the frozen helpers of src/db/migrations/ only, never live code (docs/architecture.md#dependency-rules).',
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/', pathNot: '^src/db/migrations/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.generated\\.ts$' },
    // type-only imports vanish at compile time: they make no cycle at run time
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
