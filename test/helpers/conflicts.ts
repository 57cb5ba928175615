/** Conflicting branches for the conflict resolution tests (test/web/pulls-conflicts*.test.ts), made with real git and pushed. */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Repo } from './fixtures.js';
import { git } from './server.js';

/** Commits on `branch` (made from `from` when new) files written (or removed: null) in the repository's work tree, and pushes it; returns the head. */
export async function commitWith(repo: Repo, branch: string, files: Record<string, string | Buffer | null>, message: string, from = 'main'): Promise<string> {
  const onServer = (await git(repo.work, ['ls-remote', repo.remote, `refs/heads/${branch}`])).trim() !== '';
  await git(repo.work, ['fetch', '-q', repo.remote, onServer ? branch : from]);
  await git(repo.work, ['checkout', '-q', '-B', branch, 'FETCH_HEAD']);
  for (const [name, content] of Object.entries(files)) {
    if (content === null) await git(repo.work, ['rm', '-q', '--', name]);
    else {
      await fs.mkdir(path.dirname(path.join(repo.work, name)), { recursive: true });
      await fs.writeFile(path.join(repo.work, name), content);
    }
  }
  await git(repo.work, ['add', '-A']);
  await git(repo.work, ['commit', '-q', '-m', message]);
  await git(repo.work, ['push', '-q', '-f', repo.remote, branch]);
  return (await git(repo.work, ['rev-parse', 'HEAD'])).trim();
}

/**
 * Five conflicts under `dir/` between `main` and `<dir>-feature`: a text conflict (`text.txt`),
 * an add/add (`add.txt`), a modify/delete (`md.txt`: changed on the branch, deleted on main), a
 * CRLF file (`crlf.txt`) and a binary one (`bin.dat`).
 */
export async function givenConflicts(repo: Repo, dir: string): Promise<{ branch: string; source: string; target: string }> {
  await commitWith(
    repo,
    'main',
    {
      [`${dir}/text.txt`]: 'one\ntwo\nthree\n',
      [`${dir}/md.txt`]: 'keep\n',
      [`${dir}/crlf.txt`]: 'a\r\nb\r\nc\r\n',
      [`${dir}/bin.dat`]: Buffer.from([0, 1, 98]),
    },
    `Base of ${dir}`,
  );
  const branch = `${dir}-feature`;
  const source = await commitWith(
    repo,
    branch,
    {
      [`${dir}/text.txt`]: 'one\nTWO-feature\nthree\n',
      [`${dir}/add.txt`]: 'feature\n',
      [`${dir}/md.txt`]: 'keep changed\n',
      [`${dir}/crlf.txt`]: 'a\r\nB-feature\r\nc\r\n',
      [`${dir}/bin.dat`]: Buffer.from([0, 2, 102]),
    },
    `Feature of ${dir}`,
  );
  const target = await commitWith(
    repo,
    'main',
    {
      [`${dir}/text.txt`]: 'one\nTWO-main\nthree\n',
      [`${dir}/add.txt`]: 'main\n',
      [`${dir}/md.txt`]: null,
      [`${dir}/crlf.txt`]: 'a\r\nB-main\r\nc\r\n',
      [`${dir}/bin.dat`]: Buffer.from([0, 3, 109]),
    },
    `Main of ${dir}`,
  );
  return { branch, source, target };
}
