// The dependency rules of docs/architecture.md#dependency-rules that are about the shape of the
// import graph (the layer rules live in eslint.config.js): no module may reach itself again
// through what it imports at run time.
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.generated\\.ts$' },
    // type-only imports vanish at compile time: they make no cycle at run time
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
