/**
 * Reading history for rules on pushed and merged commits (docs/compatibility.md#projects-settings
 * BranchProtection: commit message rules, file protections, signatures): the messages of a range
 * of commits, the paths changed between two commits, and whether a commit carries a signature.
 * Every function accepts an extra environment so that a pre-receive check can see objects still
 * in the push's quarantine (`GIT_OBJECT_DIRECTORY`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`).
 */
import { gitDir, gitText, runGit, value } from './command.js';
import { assertObjectId } from './names.js';

/** One commit of {@link commitMessages}. */
export interface CommitMessage {
  /** 40-hex hash. */
  hash: string;
  /** Whether the commit has more than one parent. */
  merge: boolean;
  /**
   * The message as `git log` presents it: the subject (the first paragraph, its lines joined by
   * spaces), then, when there is a body, a blank line and the body (without trailing newlines).
   */
  message: string;
}

/**
 * Messages of the commits reachable from `include` but not from `exclude`, newest first
 * (`git log -z --format=%H%x00%P%x00%s%x00%b`).
 *
 * @param repo absolute path of a bare repository.
 * @param include 40-hex hashes to start from.
 * @param exclude 40-hex hashes whose ancestry is left out.
 * @param opts `max`: at most this many commits; `env`: extra environment (quarantine).
 * @returns the commits, newest first.
 * @throws BadRequest for a malformed hash; GitError when a commit does not exist.
 * @example await commitMessages(repo, [newHash], [oldHash], { env })
 */
export async function commitMessages(
  repo: string,
  include: readonly string[],
  exclude: readonly string[] = [],
  opts: { max?: number; env?: Record<string, string> } = {},
): Promise<CommitMessage[]> {
  if (include.length === 0) return [];
  const args = [gitDir(repo), 'log', '-z', '--format=%H%x00%P%x00%s%x00%b'];
  if (opts.max !== undefined) args.push(`--max-count=${Math.max(0, Math.floor(opts.max))}`);
  args.push('--stdin');
  const lines = [...include.map((h) => assertObjectId(h)), ...exclude.map((h) => `^${assertObjectId(h)}`)];
  const out = await gitText(args, { input: lines.join('\n') + '\n', env: opts.env });
  const fields = out.split('\0');
  const commits: CommitMessage[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const hash = fields[i].replace(/^\n+/, '');
    if (!hash) break;
    const subject = fields[i + 2];
    const body = withoutTrailingNewlines(fields[i + 3]);
    commits.push({
      hash,
      merge: fields[i + 1].trim().split(' ').filter(Boolean).length > 1,
      message: body ? `${subject}\n\n${body}` : subject,
    });
  }
  return commits;
}

/**
 * `text` without its trailing newlines, read backwards: `/\n+$/` re-reads a run of newlines
 * from each of them when something follows the run, quadratic in a pushed message of newlines.
 */
function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '\n') end--;
  return text.slice(0, end);
}

/**
 * Paths that differ between two commits (`git diff-tree -r --name-only --no-renames -z`):
 * added, deleted and modified files, renames as a deletion plus an addition.
 *
 * @param repo absolute path of a bare repository.
 * @param oldCommit 40-hex hash of the commit compared from.
 * @param newCommit 40-hex hash of the commit compared to.
 * @param env extra environment (quarantine).
 * @returns repository-relative paths.
 * @throws BadRequest for a malformed hash; GitError when a commit does not exist.
 */
export async function changedFiles(repo: string, oldCommit: string, newCommit: string, env: Record<string, string> = {}): Promise<string[]> {
  const out = await gitText(
    [
      gitDir(repo),
      'diff-tree',
      '-r',
      '--name-only',
      '--no-renames',
      '--no-commit-id',
      '-z',
      value(assertObjectId(oldCommit)),
      value(assertObjectId(newCommit)),
      '--',
    ],
    { env },
  );
  return out.split('\0').filter((p) => p.length > 0);
}

/**
 * Whether a commit object carries a signature (a `gpgsig` or `gpgsig-sha256` header). The
 * signature itself is not verified: Gitloom stores no public keys.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash.
 * @param env extra environment (quarantine).
 * @returns false as well when the object is missing or not a commit.
 * @throws BadRequest for a malformed hash.
 */
export async function hasCommitSignature(repo: string, commit: string, env: Record<string, string> = {}): Promise<boolean> {
  const res = await runGit([gitDir(repo), 'cat-file', 'commit', value(assertObjectId(commit))], { env, okExitCodes: [0, 128] });
  if (res.exitCode !== 0) return false;
  const raw = res.stdout.toString('utf8');
  const headerEnd = raw.indexOf('\n\n');
  const header = headerEnd >= 0 ? raw.slice(0, headerEnd) : raw;
  return header.split('\n').some((line) => line.startsWith('gpgsig ') || line.startsWith('gpgsig-sha256 '));
}
