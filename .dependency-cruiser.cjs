// The dependency rules of docs/architecture.md#dependency-rules that are about the shape of the
// import graph (the layer rules live in eslint.config.js): no module may reach itself again
// through what it imports at run time; a domain area is entered through its door (its
// index.ts) only; the domain's kernel (the modules directly in src/domain/) sits below every
// area, except the composition root that wires them; and migrations are frozen.
const AREA = '^src/domain/[^/]+/';
const DOOR = '^src/domain/[^/]+/index\\.ts$';
const COMPOSITION_ROOT = '^src/domain/(bootstrap|consistency|event-handlers|startup-recovery)\\.ts$';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle of modules: one of them must move, or the shared part become its own module (docs/architecture.md#dependency-rules).',
      from: {},
      // type-only imports vanish at compile time: they make no cycle at run time
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'area-door',
      severity: 'error',
      comment: 'Another area is entered through its door: import its index.ts, which lists what it offers (docs/architecture.md#domain-areas).',
      from: { path: '^src/domain/([^/]+)/' },
      to: { path: AREA, pathNot: ['^src/domain/$1/', DOOR] },
    },
    {
      name: 'domain-door',
      severity: 'error',
      comment: 'Outside the domain areas, an area is entered through its door: import its index.ts (docs/architecture.md#domain-areas).',
      from: { path: '^src/', pathNot: AREA },
      to: { path: AREA, pathNot: DOOR },
    },
    {
      name: 'kernel-below-areas',
      severity: 'error',
      comment: 'The domain kernel (src/domain/*.ts) is what every area builds on: it imports no area; only the composition root wires them (docs/architecture.md#domain-areas).',
      from: { path: '^src/domain/[^/]+\\.ts$', pathNot: COMPOSITION_ROOT },
      to: { path: AREA },
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
    // type-only imports count for the doors; the cycle rule leaves them out itself
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
