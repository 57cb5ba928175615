/**
 * `!PublishArtifactStep` file collection (reference/builds.md §5): copy the workspace files
 * matching a pattern set, keeping their paths relative to `sourcePath`, into the build's
 * artifacts directory, each at most the artifact size limit.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequest, PayloadTooLarge } from '../errors.js';
import { describeBytes, writeArtifact } from './artifacts.js';
import { parsePatternSet, patternSetMatches } from './patterns.js';

/** Refuses a user-supplied relative path that is absolute or has a `..` segment. */
function checkRelative(p: string, what: string): void {
  if (p.includes('\0') || path.isAbsolute(p) || p.split(/[\\/]/).includes('..')) {
    throw new BadRequest(`${what} must be a relative path inside the workspace: '${p}'`);
  }
}

/**
 * Lists files below `dir` (relative paths with `/`) that match `patterns`.
 * Symbolic links: a link to a file inside `root` counts as that file; links to directories and
 * links pointing outside `root` are skipped (and reported through `onSkip`), so publishing can
 * never copy files from outside the workspace or loop.
 */
export async function collectFiles(root: string, dir: string, patterns: string, onSkip: (rel: string) => void = () => {}): Promise<string[]> {
  const set = parsePatternSet(patterns);
  const out: string[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const childAbs = path.join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        await walk(childAbs, childRel);
      } else if (e.isFile()) {
        if (patternSetMatches(set, childRel)) out.push(childRel);
      } else if (e.isSymbolicLink()) {
        if (!patternSetMatches(set, childRel)) continue;
        let target: string;
        try {
          target = await realpath(childAbs);
        } catch {
          onSkip(childRel);
          continue;
        }
        const inside = target === root || target.startsWith(root + path.sep);
        const st = inside ? await stat(target).catch(() => null) : null;
        if (st?.isFile()) out.push(childRel);
        else onSkip(childRel);
      }
    }
  };
  await walk(dir, '');
  return out;
}

/** Options of {@link publishArtifacts}. */
export interface PublishOptions {
  /**
   * Largest file copied, in bytes (the server's `GITLOOM_ARTIFACT_MAX_MB`); a bigger one — or
   * one that grows past it while copied — is skipped and reported through `onSkip`. Default: no
   * limit.
   */
  maxFileBytes?: number;
}

/**
 * Copies matching workspace files into `artifactsDir` (created when missing), overwriting
 * files of the same path. Each file is streamed into a temp file and renamed into place
 * (src/ci/artifacts.ts writeArtifact), counting bytes against `options.maxFileBytes`, so a file
 * over the limit leaves nothing behind.
 *
 * @param workspaceDir the job workspace.
 * @param sourcePath directory relative to the workspace, or null for the workspace root.
 * @param patterns pattern set such as `*.zip dist/**`.
 * @param artifactsDir destination root.
 * @param onSkip told each matching path not published and why (`reason` completes "Skipped
 *   '<path>': …").
 * @returns the published paths, relative to `artifactsDir`, in walk order.
 * @throws BadRequest when `sourcePath` is absolute, contains `..` or resolves outside the workspace.
 */
export async function publishArtifacts(
  workspaceDir: string,
  sourcePath: string | null,
  patterns: string,
  artifactsDir: string,
  onSkip?: (rel: string, reason: string) => void,
  options: PublishOptions = {},
): Promise<string[]> {
  const root = await realpath(workspaceDir);
  let base = root;
  if (sourcePath) {
    checkRelative(sourcePath, 'Source path');
    try {
      base = await realpath(path.join(root, sourcePath));
    } catch {
      return [];
    }
    if (base !== root && !base.startsWith(root + path.sep)) throw new BadRequest(`Source path points outside the workspace: '${sourcePath}'`);
    if (!(await lstat(base)).isDirectory()) return [];
  }
  const files = await collectFiles(root, base, patterns, (rel) => onSkip?.(rel, LINK_SKIPPED));
  await mkdir(artifactsDir, { recursive: true });
  const published: string[] = [];
  for (const rel of files) {
    const skipped = await copyArtifact(path.join(base, ...rel.split('/')), artifactsDir, rel, options.maxFileBytes);
    if (skipped === null) published.push(rel);
    else onSkip?.(rel, skipped);
  }
  return published;
}

const LINK_SKIPPED = 'symbolic link to a directory or to a file outside the workspace';

/** Copies one file (see {@link publishArtifacts}); returns why it was skipped, or null once copied. */
async function copyArtifact(source: string, artifactsDir: string, rel: string, maxBytes: number | undefined): Promise<string | null> {
  const tooLarge = () => `larger than the artifact limit of ${describeBytes(maxBytes ?? 0)}`;
  // non-blocking: a path swapped for a FIFO since it was listed cannot stall the copy
  const handle = await open(source, constants.O_RDONLY | constants.O_NONBLOCK);
  const content = handle.createReadStream({ autoClose: false, highWaterMark: 1024 * 1024 });
  try {
    const st = await handle.stat();
    if (!st.isFile()) return 'not a regular file';
    if (maxBytes !== undefined && st.size > maxBytes) return tooLarge();
    await writeArtifact(artifactsDir, rel, content, { maxBytes });
    return null;
  } catch (error) {
    if (error instanceof PayloadTooLarge) return tooLarge();
    throw error;
  } finally {
    content.destroy();
    await handle.close();
  }
}
