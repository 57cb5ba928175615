/**
 * `!PublishArtifactStep` file collection (docs/compatibility.md#builds-build-spec): copy the workspace files
 * matching a pattern set, keeping their paths relative to `sourcePath`, into the build's
 * artifacts directory, each at most the artifact size limit. The workspace is the job's: it is
 * read only by the rules of src/ci/job-directory.ts (no link followed out of it, regular files
 * only).
 */
import { createReadStream, fstatSync, realpathSync } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequest, PayloadTooLarge } from '../errors.js';
import { directoryArtifacts, type ArtifactStorage } from './artifact-storage.js';
import { describeBytes } from './artifacts.js';
import { openInside, resolveInside, UnsafePathError } from './job-directory.js';
import { parsePatternSet, patternSetMatches } from './patterns.js';

/**
 * Lists files below `dir` (relative paths with `/`) that match `patterns`.
 * Symbolic links: a link to a file inside `root` counts as that file; links to directories and
 * links pointing outside `root` are skipped (and reported through `onSkip`), so publishing can
 * never copy files from outside the workspace or loop. Directories are entered by their entry
 * type, never through a link.
 */
export async function collectFiles(root: string, dir: string, patterns: string, onSkip: (rel: string) => void = () => {}): Promise<string[]> {
  const set = parsePatternSet(patterns);
  const realRoot = realpathSync(root);
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
          target = realpathSync(childAbs);
        } catch {
          onSkip(childRel);
          continue;
        }
        const inside = target === realRoot || target.startsWith(realRoot + path.sep);
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
 * Copies matching workspace files into the build's artifacts, overwriting files of the same
 * path. Each file is opened with {@link openInside} (its real path inside the workspace,
 * `O_NOFOLLOW`, a regular file) and streamed into the artifacts' store, visible once whole
 * (src/ci/artifact-storage.ts), counting bytes against `options.maxFileBytes`, so a file over
 * the limit leaves nothing behind.
 *
 * @param workspaceDir the job workspace.
 * @param sourcePath directory relative to the workspace, or null for the workspace root.
 * @param patterns pattern set such as `*.zip dist/**`.
 * @param artifacts the destination: a directory (created when missing) or an {@link ArtifactStorage}.
 * @param onSkip told each matching path not published and why (`reason` completes "Skipped
 *   '<path>': …").
 * @returns the published paths, relative to the artifacts root, in walk order.
 * @throws BadRequest when `sourcePath` is absolute, contains `..` or passes through a link.
 */
export async function publishArtifacts(
  workspaceDir: string,
  sourcePath: string | null,
  patterns: string,
  artifacts: string | ArtifactStorage,
  onSkip?: (rel: string, reason: string) => void,
  options: PublishOptions = {},
): Promise<string[]> {
  let base = workspaceDir;
  if (sourcePath) {
    let resolved;
    try {
      resolved = await resolveInside(workspaceDir, sourcePath, 'Source path');
    } catch (e) {
      if (e instanceof UnsafePathError) throw new BadRequest(e.message);
      throw e;
    }
    if (!resolved.exists) return [];
    base = resolved.path;
  }
  const files = await collectFiles(workspaceDir, base, patterns, (rel) => onSkip?.(rel, LINK_SKIPPED));
  const prefix = path.relative(workspaceDir, base);
  if (typeof artifacts === 'string') await mkdir(artifacts, { recursive: true });
  const target = typeof artifacts === 'string' ? directoryArtifacts(artifacts) : artifacts;
  const published: string[] = [];
  for (const rel of files) {
    const skipped = await copyArtifact(workspaceDir, path.join(prefix, ...rel.split('/')), target, rel, options.maxFileBytes);
    if (skipped === null) published.push(rel);
    else onSkip?.(rel, skipped);
  }
  return published;
}

const LINK_SKIPPED = 'symbolic link to a directory or to a file outside the workspace';

/**
 * Copies the file `source` (relative to the workspace `root`, opened by {@link openInside}) to
 * `rel` of `target` (see {@link publishArtifacts}); returns why it was skipped, or null once
 * copied.
 */
async function copyArtifact(root: string, source: string, target: ArtifactStorage, rel: string, maxBytes: number | undefined): Promise<string | null> {
  const tooLarge = () => `larger than the artifact limit of ${describeBytes(maxBytes ?? 0)}`;
  let fd: number;
  try {
    fd = openInside(root, source, 'Artifact');
  } catch (error) {
    if (error instanceof UnsafePathError) return error.reason;
    throw error;
  }
  const content = createReadStream('', { fd, highWaterMark: 1024 * 1024 });
  try {
    if (maxBytes !== undefined && fstatSync(fd).size > maxBytes) return tooLarge();
    await target.write(rel, content, { maxBytes });
    return null;
  } catch (error) {
    if (error instanceof PayloadTooLarge) return tooLarge();
    throw error;
  } finally {
    content.destroy();
  }
}
