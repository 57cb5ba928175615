/**
 * Code search figures (docs/compatibility.md#code-search), beside `git grep` on the same tree:
 * a generated repository of BENCH_CODE_FILES files (default 4,000 in 400 directories, ~10 KiB of
 * source-like text each: about git/git's tree) and ten small projects are pushed; then
 * - indexing from scratch: push → every file searchable (target < 3 min);
 * - an incremental push of one changed file: from the push's end to its new text searchable
 *   (target < 1 s), and the push itself;
 * - a literal and a regular expression search, server time p50 over all projects (app.inject,
 *   targets < 100 ms and < 300 ms), beside `git grep -i -F` / `git grep -E` of the big tree;
 * - a literal search on a non-default branch of the big project (`ref=feature`: `git grep` and the
 *   candidates verified, no index), p50, beside `git grep -F -i` of that branch's tree.
 * - a symbol search (Universal Ctags' definitions, when the machine has it): an exact name and a
 *   prefix, server time p50 over all projects, beside `git grep -w` of the name in the big tree.
 *
 * Run: `npx tsx bench/code-search.ts` (PostgreSQL: `GITLOOM_BENCH_DATABASE_URL=postgres://…`).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, report, startInProcessServer, time } from './lib.js';

const PASSWORD = 'bench-secret';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const FILES = Number(process.env.BENCH_CODE_FILES ?? 4000);
const RUNS = 30;

const WORDS = ['parse', 'render', 'schedule', 'cache', 'index', 'route', 'mail', 'token', 'import', 'export', 'merge', 'commit', 'branch', 'tree', 'blob'];

/** Deterministic source-like text of file `n`: ~10 KiB of functions with varied identifiers. */
function source(n: number): string {
  const lines: string[] = [];
  for (let f = 0; lines.length < 250; f++) {
    const name = `${WORDS[(n + f) % WORDS.length]}${WORDS[(n * 7 + f * 3) % WORDS.length]}${n}x${f}`;
    lines.push(`/** ${WORDS[f % WORDS.length]} the ${WORDS[(f + n) % WORDS.length]} of item ${n}.${f}. */`);
    lines.push(`export function ${name}(input: string, count: number): string {`);
    lines.push(`  const value = input.repeat(count) + '${name}';`);
    lines.push(`  return value.length > ${f * 13 + n} ? value.slice(0, ${f + 3}) : value;`);
    lines.push('}');
  }
  return `${lines.join('\n')}\n`;
}

const bench = await startInProcessServer('code-search', PASSWORD);
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-code-'));
try {
  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${bench.server.url}/~api${route}`, {
      method,
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const remote = (name: string) => {
    const url = new URL(`${bench.server.url}/${name}`);
    url.username = 'admin';
    url.password = PASSWORD;
    return url.toString();
  };
  const search = async (query: string) => {
    const res = await bench.server.app.inject({ method: 'GET', url: `/~code?${query}`, headers: { authorization: AUTH } });
    if (res.statusCode !== 200) throw new Error(`/~code?${query}: ${res.statusCode}`);
    return res.body;
  };
  const searchable = async (query: string, expected: string) => {
    while (!(await search(query)).includes(expected)) await new Promise((r) => setTimeout(r, 20));
  };

  for (let p = 0; p < 10; p++) {
    await api('POST', '/projects', { name: `small-${p}` });
    const dir = path.join(work, `small-${p}`);
    await fs.mkdir(dir);
    await git(dir, ['init', '-q', '-b', 'main']);
    for (let i = 0; i < 50; i++) await fs.writeFile(path.join(dir, `file-${i}.ts`), source(100_000 + p * 50 + i));
    await git(dir, ['add', '-A']);
    await git(dir, ['commit', '-q', '-m', 'small']);
    await git(dir, ['push', '-q', remote(`small-${p}`), 'main']);
  }

  await api('POST', '/projects', { name: 'big' });
  const big = path.join(work, 'big');
  await fs.mkdir(big);
  await git(big, ['init', '-q', '-b', 'main']);
  for (let n = 0; n < FILES; n++) {
    const dir = path.join(big, `dir-${n % 400}`);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, `file-${n}.ts`), source(n));
  }
  await git(big, ['add', '-A']);
  await git(big, ['commit', '-q', '-m', 'big tree']);
  const last = `${WORDS[(FILES - 1) % WORDS.length]}${WORDS[((FILES - 1) * 7) % WORDS.length]}${FILES - 1}x0`;
  const indexMs = await time(async () => {
    await git(big, ['push', '-q', remote('big'), 'main']);
    await searchable(`q=${last}&project=big`, `file-${FILES - 1}.ts`);
  });
  report(`index ${FILES} files (${Math.round((FILES * source(1).length) / 1024 ** 2)} MiB) from scratch`, `${(indexMs / 1000).toFixed(1)} s`, '< 180 s');

  await fs.writeFile(path.join(big, 'dir-0', 'file-0.ts'), `${source(0)}export const incrementalMarker = 42;\n`);
  await git(big, ['commit', '-q', '-am', 'one change']);
  const pushMs = await time(() => git(big, ['push', '-q', remote('big'), 'main']));
  const incrementalMs = await time(() => searchable('q=incrementalMarker', 'file-0.ts'));
  report('incremental push of one file: pushed → searchable', `${incrementalMs.toFixed(0)} ms`, '< 1000 ms');
  report('  the git push itself', `${pushMs.toFixed(0)} ms`, '');

  const p50 = async (fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await time(fn));
    return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
  };
  const literal = `cachetoken${FILES - 7}`;
  const literalMs = await p50(() => search(`q=${literal}`));
  const grepLiteral = await p50(() => git(big, ['grep', '-i', '-F', '-c', '-e', literal, 'HEAD']).catch(() => ''));
  report('literal search, all projects, p50', `${literalMs.toFixed(1)} ms`, '< 100 ms');
  report('  git grep -i -F of the big tree alone, p50', `${grepLiteral.toFixed(1)} ms`, '');
  const regex = 'render\\w+x1[0-9]+\\(input';
  const regexMs = await p50(() => search(`q=${encodeURIComponent(regex)}&regex=1`));
  const grepRegex = await p50(() => git(big, ['grep', '-E', '-c', '-e', 'render[[:alnum:]_]+x1[0-9]+\\(input', 'HEAD']).catch(() => ''));
  report('regex search (literal run "render"), all projects, p50', `${regexMs.toFixed(1)} ms`, '< 300 ms');
  report('  git grep -E of the big tree alone, p50', `${grepRegex.toFixed(1)} ms`, '');
  const symbol = `${WORDS[(FILES - 3 + 4) % WORDS.length]}${WORDS[((FILES - 3) * 7 + 12) % WORDS.length]}${FILES - 3}x4`;
  if (!(await search(`q=${symbol}&mode=symbol`)).includes(`file-${FILES - 3}.ts:`)) {
    report('symbol search', 'skipped: no Universal Ctags', '');
  } else {
    const symbolMs = await p50(() => search(`q=${symbol}&mode=symbol`));
    const grepWord = await p50(() => git(big, ['grep', '-w', '-c', '-e', symbol, 'HEAD']).catch(() => ''));
    report('symbol search (exact name), all projects, p50', `${symbolMs.toFixed(1)} ms`, '< 100 ms');
    report('  git grep -w of the big tree alone, p50', `${grepWord.toFixed(1)} ms`, '');
    const prefixMs = await p50(() => search(`q=${WORDS[0]}${WORDS[1]}&mode=symbol`));
    report('symbol search (a prefix, 100 shown), all projects, p50', `${prefixMs.toFixed(1)} ms`, '< 100 ms');
  }

  await git(big, ['checkout', '-q', '-b', 'feature']);
  await fs.writeFile(path.join(big, 'dir-1', 'file-1.ts'), `${source(1)}export const featureOnlyMarker = 7;\n`);
  await git(big, ['commit', '-q', '-am', 'feature change']);
  await git(big, ['push', '-q', remote('big'), 'feature']);
  const refQuery = 'q=featureOnlyMarker&project=big&ref=feature';
  if (!(await search(refQuery)).includes('file-1.ts')) throw new Error('the feature branch search misses its change');
  const refMs = await p50(() => search(refQuery));
  const grepRef = await p50(() => git(big, ['grep', '-F', '-i', '-l', '-e', 'featureOnlyMarker', 'feature']));
  report(
    `literal search on a non-default branch (${FILES} files, no index), p50`,
    `${refMs.toFixed(1)} ms`,
    `none (${(refMs / grepRef).toFixed(1)}× git grep)`,
  );
  report('  git grep -F -i of that branch alone, p50', `${grepRef.toFixed(1)} ms`, '');
} finally {
  await bench.close();
  await fs.rm(work, { recursive: true, force: true });
}
