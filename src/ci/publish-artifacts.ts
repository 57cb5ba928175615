/**
 * `!PublishArtifactStep` file collection (reference/builds.md §5): copy the workspace files
 * matching a pattern set, keeping their paths relative to `sourcePath`, into the build's
 * artifacts directory.
 */
import { copyFile, lstat, mkdir, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequest } from '../errors.js';
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

/**
 * Copies matching workspace files into `artifactsDir` (created when missing), overwriting
 * files of the same path.
 *
 * @param workspaceDir the job workspace.
 * @param sourcePath directory relative to the workspace, or null for the workspace root.
 * @param patterns pattern set such as `*.zip dist/**`.
 * @param artifactsDir destination root.
 * @returns the published paths, relative to `artifactsDir`, in walk order.
 * @throws BadRequest when `sourcePath` is absolute, contains `..` or resolves outside the workspace.
 */
export async function publishArtifacts(
  workspaceDir: string,
  sourcePath: string | null,
  patterns: string,
  artifactsDir: string,
  onSkip?: (rel: string) => void,
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
  const files = await collectFiles(root, base, patterns, onSkip);
  await mkdir(artifactsDir, { recursive: true });
  for (const rel of files) {
    const dest = path.join(artifactsDir, ...rel.split('/'));
    await mkdir(path.dirname(dest), { recursive: true });
    await copyFile(path.join(base, ...rel.split('/')), dest);
  }
  return files;
}
