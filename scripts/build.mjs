// `npm run build`: compiles src/ into dist/ (tsconfig.build.json) and copies the web UI's static
// assets (CSS, client modules) next to the compiled code, then stamps dist/.build-stamp (what
// `npm start` compares with the sources). Used by `npm start` when sources changed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
fs.cpSync(path.join(root, 'src', 'web', 'assets'), path.join(root, 'dist', 'web', 'assets'), { recursive: true });
fs.writeFileSync(path.join(root, 'dist', '.build-stamp'), `${new Date().toISOString()}\n`);
