/**
 * The build spec of a commit (reference/builds.md §5): `.onedev-buildspec.yml` (or the legacy
 * `.onedev-buildspec`) read at the commit through src/git and parsed by src/ci/build-spec.ts.
 */
import { BUILD_SPEC_FILE, BuildSpecError, LEGACY_BUILD_SPEC_FILE, parseBuildSpec, type BuildSpec, type Job } from '../../ci/build-spec.js';
import { readBlob } from '../../git/files.js';

/**
 * Outcome of reading a spec: absent, invalid (with the validation message and what could still
 * be read of its jobs, null when the YAML is unreadable) or parsed.
 */
export type SpecAt = { kind: 'absent' } | { kind: 'invalid'; message: string; partial: BuildSpec | null } | { kind: 'valid'; spec: BuildSpec };

const cache = new Map<string, SpecAt>();
const CACHE_LIMIT = 200;

/**
 * Reads and parses the build spec at a commit. Results are cached by repository and commit
 * (a commit's content never changes).
 *
 * @throws GitError when git fails for another reason than a missing file.
 */
export async function specAt(repo: string, commit: string): Promise<SpecAt> {
  const key = `${repo}\0${commit}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const blob = (await readBlob(repo, commit, BUILD_SPEC_FILE)) ?? (await readBlob(repo, commit, LEGACY_BUILD_SPEC_FILE));
  let result: SpecAt;
  if (blob === null) result = { kind: 'absent' };
  else {
    try {
      result = { kind: 'valid', spec: parseBuildSpec(blob.toString('utf8')) };
    } catch (error) {
      if (!(error instanceof BuildSpecError)) throw error;
      result = { kind: 'invalid', message: error.message, partial: error.partial };
    }
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, result);
  return result;
}

/** The job of a parsed spec by name, or undefined. */
export function findJob(spec: BuildSpec, jobName: string): Job | undefined {
  return spec.jobs.find((j) => j.name === jobName);
}
