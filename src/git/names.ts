/**
 * Validation of the names git accepts: object ids, full ref names and branch names.
 * Implements the rules of `git check-ref-format` (docs/compatibility.md#projects-repository-and-default-branch for branches).
 */
import { BadRequest } from '../errors.js';
import { runGit, value } from './command.js';

/** 40 zeros: git's "no object" id, used by `update-ref` for "must not exist". */
export const ZERO_HASH = '0000000000000000000000000000000000000000';

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Whether `text` is a full lowercase hex object id (SHA-1 or SHA-256). */
export function isObjectId(text: string): boolean {
  return OBJECT_ID.test(text);
}

/**
 * Checks that `text` is a full lowercase hex object id.
 *
 * @returns `text`.
 * @throws BadRequest `Invalid commit hash: <text>` otherwise.
 */
export function assertObjectId(text: string): string {
  if (!OBJECT_ID.test(text)) throw new BadRequest(`Invalid commit hash: ${text}`);
  return text;
}

/**
 * Whether `ref` is a valid full ref name under `refs/` by the rules of `git check-ref-format`
 * (no `..`, `@{`, control characters, space, `~^:?*[\`; no component starting with `.` or ending
 * with `.lock`; no `//`; not ending with `/` or `.`).
 */
export function isValidRefName(ref: string): boolean {
  if (!ref.startsWith('refs/') || ref.length > 4096) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(ref)) return false;
  if (ref.includes('..') || ref.includes('@{') || ref.includes('//')) return false;
  if (ref.endsWith('/') || ref.endsWith('.')) return false;
  for (const part of ref.split('/')) {
    if (part.length === 0 || part.startsWith('.') || part.endsWith('.lock')) return false;
  }
  return true;
}

/**
 * Checks a full ref name (see {@link isValidRefName}).
 *
 * @returns `ref`.
 * @throws BadRequest `Invalid ref name: <ref>` otherwise.
 */
export function assertValidRefName(ref: string): string {
  if (!isValidRefName(ref)) throw new BadRequest(`Invalid ref name: ${ref}`);
  return ref;
}

/**
 * Checks a user-supplied short branch name with `git check-ref-format --branch` (and refuses
 * `HEAD` and names starting with `-`), so it can become `refs/heads/<name>`.
 *
 * @param name the short branch name, e.g. `feature/x`.
 * @returns the name.
 * @throws BadRequest `Invalid branch name: <name>` when git rejects it.
 */
export async function assertValidBranchName(name: string): Promise<string> {
  if (name === 'HEAD' || name.startsWith('-') || !isValidRefName(`refs/heads/${name}`)) {
    throw new BadRequest(`Invalid branch name: ${name}`);
  }
  const res = await runGit(['check-ref-format', '--branch', value(name)], {
    okExitCodes: [0, 1, 128],
    env: { GIT_CEILING_DIRECTORIES: '/' },
  });
  if (res.exitCode !== 0 || res.stdout.toString('utf8').trim() !== name) {
    throw new BadRequest(`Invalid branch name: ${name}`);
  }
  return name;
}
