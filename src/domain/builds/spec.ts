/**
 * The build spec of a commit (docs/compatibility.md#builds-build-spec): `.onedev-buildspec.yml` (or the legacy
 * `.onedev-buildspec`) read at the commit through src/git and parsed by src/ci/build-spec.ts.
 */
import { BUILD_SPEC_FILE, BuildSpecError, LEGACY_BUILD_SPEC_FILE, parseBuildSpec, type BuildSpec, type Job } from '../../ci/build-spec.js';
import type { VariableContext } from '../../ci/variables.js';
import { logCommits } from '../../git/commit-log.js';
import { readBlobs } from '../../git/files.js';

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
  const [current, legacy] = await readBlobs(repo, commit, [BUILD_SPEC_FILE, LEGACY_BUILD_SPEC_FILE]);
  const blob = current ?? legacy;
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

/** How many earlier versions of the spec file {@link lastReadableSpec} looks at. */
const SPEC_HISTORY_LIMIT = 20;

/**
 * The spec of the newest version of the spec file, in the history of `commit`, that parses: the
 * rules a commit whose own spec is unreadable would most likely have been built by
 * (docs/compatibility.md#builds-creating-builds: which refs get a FAILED build for an unreadable spec). Looks at the
 * last {@link SPEC_HISTORY_LIMIT} commits that changed `.onedev-buildspec.yml` or its legacy name.
 *
 * @returns the spec, or null when none of those versions parses (or the file never existed).
 * @throws GitError when git fails.
 */
export async function lastReadableSpec(repo: string, commit: string): Promise<BuildSpec | null> {
  const changes = await logCommits(repo, {
    include: [commit],
    exclude: [],
    authors: [],
    committers: [],
    messages: [],
    paths: [BUILD_SPEC_FILE, LEGACY_BUILD_SPEC_FILE],
    before: null,
    after: null,
    max: SPEC_HISTORY_LIMIT,
  });
  for (const hash of changes) {
    const spec = await specAt(repo, hash);
    if (spec.kind === 'valid') return spec.spec;
  }
  return null;
}

/**
 * The `@...@` variables of a build's job (src/ci/variables.ts `VariableContext`;
 * docs/compatibility.md#builds-build-spec): the project, job, ref, commit, number, params and spec
 * properties; the caller adds what only it knows (pull request number, secrets).
 */
export function jobVariables(
  build: { refName: string; commitHash: string; number: number },
  project: { name: string; path: string },
  spec: BuildSpec,
  job: Job,
  params: Record<string, string[]>,
): VariableContext {
  return {
    projectName: project.name,
    projectPath: project.path,
    jobName: job.name,
    ref: build.refName,
    commitHash: build.commitHash,
    buildNumber: build.number,
    params,
    properties: Object.fromEntries(spec.properties.map((p) => [p.name, p.value])),
  };
}
