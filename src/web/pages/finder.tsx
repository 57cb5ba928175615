/**
 * The "go to file" finder of a revision: `/<project>/~find/<revision>?q=…` lists the paths that
 * fuzzily match `q` (fuzzysort, best first; without `q` the first paths), each linked to its file
 * page — a plain GET form without JavaScript; finder.js filters the same way in the browser as
 * one types, over the path list of `/<project>/~paths/<revision>` (JSON: `{ commit, paths,
 * truncated }`). The `t` key opens the finder from the code pages (keys.js).
 */
import fuzzysort from 'fuzzysort';
import { revisionPaths } from '../../domain/repositories/index.js';
import { assetUrl } from '../assets.js';
import { codeUrl, encodePath } from '../components/code.js';
import { ProjectLayout } from '../components/project-layout.js';
import { rawResponse, type ProjectPageContext } from '../page.js';

/** The most matches the finder lists. */
const SHOWN = 100;

/** The URL of the finder of a revision. */
export function finderUrl(projectPath: string, revision: string): string {
  return `/${projectPath}/~find/${encodePath(revision)}`;
}

/** The paths of `paths` that match `query`, best first (all of them in order without a query), at most {@link SHOWN}. */
function matches(paths: string[], query: string): string[] {
  if (!query) return paths.slice(0, SHOWN);
  return fuzzysort.go(query, paths, { limit: SHOWN, threshold: 0 }).map((r) => r.target);
}

/** `/~find/<revision>`: the finder page. */
export async function finderPage(page: ProjectPageContext, revision: string) {
  const project = page.project.path;
  const { at, paths, truncated } = await revisionPaths(page.ctx, page.project, revision);
  const query = (page.query.q ?? '').trim();
  const found = matches(paths, query);
  return (
    <ProjectLayout page={page} tab="code" title={`Go to file at ${at.revision}`} scripts={['finder.js']}>
      <h1>Go to file</h1>
      <p class="meta">
        {'In '}
        <a href={codeUrl(project, 'files', at.revision)}>{at.revision}</a>
        {truncated && ` (the first ${paths.length.toLocaleString('en-US')} paths)`}
      </p>
      <form
        method="get"
        action={finderUrl(project, at.revision)}
        class="query finder-form"
        role="search"
        data-finder
        data-paths={pathsUrl(project, at.commitHash)}
        data-files={`${codeUrl(project, 'files', at.revision)}/`}
        data-fuzzysort={assetUrl('fuzzysort.js')}
      >
        <label for="finder-query">File name</label>
        <input id="finder-query" name="q" value={query} autocomplete="off" spellcheck={false} autofocus />
        <button type="submit">Find</button>
      </form>
      <p class="meta" aria-live="polite" data-finder-count>
        {query
          ? `${found.length === SHOWN ? `${SHOWN}+` : found.length} matching ${found.length === 1 ? 'file' : 'files'}`
          : `${paths.length.toLocaleString('en-US')} files`}
      </p>
      <ul class="finder-results" aria-label="Files" data-finder-results>
        {found.map((path) => (
          <li key={path}>
            <a href={codeUrl(project, 'files', at.revision, path)}>{path}</a>
          </li>
        ))}
      </ul>
    </ProjectLayout>
  );
}

/** The URL of the path list (JSON) of a commit. */
function pathsUrl(projectPath: string, commitHash: string): string {
  return `/${projectPath}/~paths/${commitHash}`;
}

/** `/~paths/<revision>`: the path list as JSON; a commit's list never changes and may be kept by the browser. */
export async function pathsJson(page: ProjectPageContext, revision: string) {
  const { at, paths, truncated } = await revisionPaths(page.ctx, page.project, revision);
  const immutable = at.ref === null && at.revision === at.commitHash;
  return rawResponse('application/json; charset=utf-8', JSON.stringify({ commit: at.commitHash, paths, truncated }), {
    'cache-control': immutable ? 'private, max-age=31536000, immutable' : 'private, no-cache',
  });
}
