/**
 * `!PublishArtifactStep` file collection (reference/builds.md §5): copy the workspace files
 * matching a pattern set, keeping their paths relative to `sourcePath`, into the build's
 * artifacts directory. The workspace is the job's: it is read only by the rules of
 * src/ci/job-directory.ts (no link followed out of it, regular files only).
 */
import { createReadStream, createWriteStream, realpathSync } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BadRequest } from '../errors.js';
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

/**
 * Copies matching workspace files into `artifactsDir` (created when missing), overwriting
 * files of the same path. Each file is opened with {@link openInside} (its real path inside the
 * workspace, `O_NOFOLLOW`, a regular file) and streamed.
 *
 * @param workspaceDir the job workspace.
 * @param sourcePath directory relative to the workspace, or null for the workspace root.
 * @param patterns pattern set such as `*.zip dist/**`.
 * @param artifactsDir destination root.
 * @returns the published paths, relative to `artifactsDir`, in walk order.
 * @throws BadRequest when `sourcePath` is absolute, contains `..` or passes through a link.
 */
export async function publishArtifacts(
  workspaceDir: string,
  sourcePath: string | null,
  patterns: string,
  artifactsDir: string,
  onSkip?: (rel: string) => void,
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
  const files = await collectFiles(workspaceDir, base, patterns, onSkip);
  const prefix = path.relative(workspaceDir, base);
  await mkdir(artifactsDir, { recursive: true });
  for (const rel of files) {
    const dest = path.join(artifactsDir, ...rel.split('/'));
    await mkdir(path.dirname(dest), { recursive: true });
    const fd = openInside(workspaceDir, path.join(prefix, ...rel.split('/')), 'Artifact');
    await pipeline(createReadStream('', { fd }), createWriteStream(dest));
  }
  return files;
}
