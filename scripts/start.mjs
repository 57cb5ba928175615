// `npm start`: compiles src/ into dist/ only when a source (or the compiler configuration) is
// newer than the last build, then runs `gitloom serve` in this process. Arguments after `--`
// are passed on: `npm start -- --port 8080`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');

/** Newest modification time (ms) of a file or of the files below a directory. */
function newest(target) {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of fs.readdirSync(target)) latest = Math.max(latest, newest(path.join(target, entry)));
  return latest;
}

const sources = Math.max(...['src', 'scripts/build.mjs', 'package-lock.json'].map((p) => newest(path.join(root, p))));
const built = fs.statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
if (sources > built) {
  process.stderr.write('Compiling Gitloom (sources changed since the last build)…\n');
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

process.argv = [process.argv[0], path.join(root, 'dist', 'cli.js'), 'serve', ...process.argv.slice(2)];
await import('../dist/cli.js');
