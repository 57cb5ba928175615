// `npm run build`: bundles the server into dist/ with esbuild — dist/cli.js (the `gitloom`
// command), dist/hook-program.js (what git's pre- and post-receive hooks run) and, for what the
// server loads only on first use (the PostgreSQL driver, swagger-ui, the backup code, …), chunks
// beside them — and copies the web UI's static assets to dist/assets and the seccomp compiler
// and the image build launcher (src/ci/seccomp-bpf.py, src/ci/userns-exec.py) beside them. One file instead of some
// 3,000 ES modules is most of the server's start-up time and a good part of its memory.
// Packages that ship native code or read their own files at run time stay in node_modules.
// Then stamps dist/.build-stamp (what `npm start` compares with the sources).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

/** Loaded from node_modules at run time: native addons, worker-thread transports, static files. */
const EXTERNAL = [
  'better-sqlite3',
  'pg-native',
  'pino',
  'pino-*',
  'thread-stream',
  '@fastify/swagger-ui',
  '@fastify/fast-json-stringify-compiler',
  // the container engine client: its SSH transport (ssh2) ships native addons
  'dockerode',
  // SSH keys and git over SSH: ssh2 loads its native crypto binding (and cpu-features) beside its own files
  'ssh2',
  // avatars: sharp loads libvips's binding of the platform's @img/sharp-* package at run time
  'sharp',
];

fs.rmSync(dist, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'src/cli.ts', 'hook-program': 'src/git/hook-program.ts' },
  outdir: dist,
  bundle: true,
  splitting: true,
  // chunks sit beside cli.js: modules that find files next to themselves (the hooks, the
  // assets) see the same directory from any chunk
  chunkNames: 'chunk-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // V8 keeps the source of every loaded module in memory: without whitespace and comments the
  // bundle is a third of its size (and one-byte text, where a single non-ASCII comment made it
  // two-byte); names stay, so stack traces still name functions
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
  // CommonJS packages inside an ES module bundle call `require` for Node's built-ins
  banner: { js: "import { createRequire as __gitloomRequire } from 'node:module'; const require = __gitloomRequire(import.meta.url);" },
});
fs.cpSync(path.join(root, 'src', 'web', 'assets'), path.join(dist, 'assets'), { recursive: true });
for (const script of ['seccomp-bpf.py', 'userns-exec.py']) fs.cpSync(path.join(root, 'src', 'ci', script), path.join(dist, script));
fs.writeFileSync(path.join(dist, '.build-stamp'), `${new Date().toISOString()}\n`);
