/**
 * `/<project>/~files/<revision>/<path>`: a directory listing (each entry with its last commit,
 * `/~last-commits/…` serving them as JSON when the page showed before they were read) or a file
 * (highlighted, numbered lines with `#L<n>` anchors; a large file capped with a notice; a binary
 * file offered as a download; on a text file "Go to definition", definitions.js),
 * `/<project>/~definitions?name=…&path=…`: the definitions of a name in the project's code index
 * as JSON (docs/compatibility.md#code-search), `/<project>/~blame/<revision>/<path>`: a text file's lines beside
 * the commit that last changed them (and a link to blame them before it), and
 * `/<project>/~raw/<revision>/<path>`: the raw bytes. Every view has the branch and tag
 * switcher, "Go to file" (`t`, finder.tsx) and its permalink (`y`: the view at the commit). The revision may contain `/`
 * (`feature/x`): the longest prefix naming a branch or tag wins (domain revisions.ts). A Git LFS
 * file shows, and downloads raw as, the object its pointer names (docs/compatibility.md#git-lfs).
 *
 * Raw bytes never run as a page of our origin: HTML, SVG, XML, JavaScript and CSS go out as
 * `text/plain` (binary ones as `application/octet-stream`), other text as its own text type,
 * images, audio, video and JSON as their type, everything else as an attachment; always with
 * the headers of every download of user content (src/plugins/user-content.ts: `nosniff`, a
 * sandboxing Content-Security-Policy).
 */
import mime from 'mime';
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { findDefinitions, MAX_DEFINITIONS, symbolsAvailable } from '../../domain/code-search/index.js';
import { BadRequest } from '../../errors.js';
import { isActiveType, isSafeType, userContentHeaders } from '../../plugins/user-content.js';
import {
  type Blame,
  blameAt,
  browseAt,
  type BrowseResult,
  lastCommitsAt,
  lineCount,
  MAX_VIEW_BYTES,
  MAX_VIEW_LINES,
  rawFileAt,
  revisionNames,
  trimSlashes,
} from '../../domain/repositories/index.js';
import { ArchiveMenu, codeUrl, commitUrl, RevisionSwitcher } from '../components/code.js';
import { ProjectLayout } from '../components/project-layout.js';
import { Readme } from '../components/readme.js';
import { LAST_COMMITS_WAIT_MS, lastCommitCells, pendingLastCommits, TreeTable } from '../components/tree.js';
import { finderPage, finderUrl, pathsJson } from './finder.js';
import { highlightFile } from '../highlight.js';
import { escapeHtml } from '../components/diff-lines.js';
import { formatCount } from '../components/sizes.js';
import { rawResponse, redirect, type PageModule, type ProjectPageContext } from '../page.js';
import { EditLinks } from './edit/links.js';

const TEXT = 'text/plain; charset=utf-8';
const OCTET_STREAM = 'application/octet-stream';

/**
 * The Content-Type of a raw file, and whether it is shown inline (a safe type, as every download
 * of user content decides: src/plugins/user-content.ts): see the module comment.
 */
export function rawContentType(path: string, binary: boolean): { contentType: string; inline: boolean } {
  const type = mime.getType(path);
  const contentType = type === null || isActiveType(type) ? (binary ? OCTET_STREAM : TEXT) : type.startsWith('text/') ? `${type}; charset=utf-8` : type;
  return { contentType, inline: isSafeType(contentType) };
}

function Crumbs({ page, revision, path }: { page: ProjectPageContext; revision: string; path: string }) {
  const segments = path ? path.split('/') : [];
  const project = page.project.path;
  return (
    <nav aria-label="Path" class="crumbs path-crumbs">
      <a href={codeUrl(project, 'files', revision)}>{page.project.name}</a>
      {segments.map((name, i) => (
        <span key={i}>
          {' / '}
          {i === segments.length - 1 ? (
            <span aria-current="page">{name}</span>
          ) : (
            <a href={codeUrl(project, 'files', revision, segments.slice(0, i + 1).join('/'))}>{name}</a>
          )}
        </span>
      ))}
    </nav>
  );
}

function historyUrl(projectPath: string, at: { revision: string; path: string }): string {
  return `/${projectPath}/~commits?${new URLSearchParams({ revision: at.revision, ...(at.path && { query: `path(${at.path.replace(/[()\\]/g, '\\$&')})` }) })}`;
}

/** The scripts of the code pages: the switcher's filter, the `t` and `y` keys, and the last commits read late. */
export const CODE_SCRIPTS = ['switcher.js', 'keys.js', 'tree.js'];

/**
 * `/~last-commits/<revision>[/<dir>]`: the last-commit and date cells of a directory's entries as
 * JSON (`{ commit, rows: { <name>: { commit, date } } }`, HTML rendered here, escaped), for
 * tree.js to fill a tree view that showed without them; waits for the walk.
 */
async function lastCommitsJson(page: ProjectPageContext, tail: string) {
  const result = await browseAt(page.ctx, page.project, tail);
  if (result.kind !== 'tree') throw new BadRequest(`Specified path is not a directory: ${result.at.path}`);
  const { at } = result;
  const found = await lastCommitsAt(
    page.ctx,
    page.project,
    at.commitHash,
    at.path,
    result.entries.map((e) => e.name),
  );
  const rows = Object.fromEntries(
    result.entries.map((entry) => {
      const cells = lastCommitCells(page.project.path, found?.get(entry.name));
      return [entry.name, { commit: renderToString(<>{cells.commit}</>), date: renderToString(<>{cells.date}</>) }];
    }),
  );
  return rawResponse('application/json; charset=utf-8', JSON.stringify({ commit: at.commitHash, rows }), { 'cache-control': 'private, no-cache' });
}

/**
 * The header of every files page (directory, file, blame): the branch and tag switcher, the
 * path as breadcrumbs (on a directory, the "Download" menu of the revision's archive), and the
 * page's actions — go to file (`t`), permalink (`y`: the same page at the commit), history, the
 * commit — with `children` (the view's own links) first.
 */
function CodeHeader({
  page,
  view,
  at,
  names,
  download = false,
  children,
}: {
  page: ProjectPageContext;
  view: 'files' | 'blame';
  at: BrowseResult['at'];
  names: BrowseResult['names'];
  download?: boolean;
  children?: ComponentChildren;
}) {
  const project = page.project.path;
  return (
    <>
      <div class="code-header">
        <RevisionSwitcher
          action={`/${project}/~${view}`}
          name="revision"
          current={at.revision}
          branches={names.branches}
          tags={names.tags}
          hrefOf={(revision) => codeUrl(project, view, revision, at.path)}
          hidden={at.path ? { path: at.path } : {}}
        />
        <Crumbs page={page} revision={at.revision} path={at.path} />
        {download && <ArchiveMenu projectId={page.project.id} revision={at.revision} />}
      </div>
      <p class="meta code-actions">
        {children}
        <a href={finderUrl(project, at.revision)} data-key="t" aria-keyshortcuts="t" title="Go to file (t)">
          Go to file
        </a>
        {' · '}
        <a href={codeUrl(project, view, at.commitHash, at.path)} data-key="y" aria-keyshortcuts="y" title="The page at this commit (y)">
          Permalink
        </a>
        {' · '}
        <a href={historyUrl(project, at)}>History</a>
        {' · '}commit{' '}
        <a href={commitUrl(project, at.commitHash)}>
          <code>{at.commitHash.slice(0, 8)}</code>
        </a>
      </p>
    </>
  );
}

async function filesPage(page: ProjectPageContext, tail: string) {
  const project = page.project.path;
  const result = await browseAt(page.ctx, page.project, tail);
  const { at } = result;
  if (result.kind === 'file') return filePage(page, 'files', result, null, await symbolsAvailable(page.ctx));
  const name = at.path ? at.path.split('/').pop()! : page.project.name;
  const names = result.entries.map((e) => e.name);
  const wait = page.query['last-commits'] === 'wait' ? Infinity : LAST_COMMITS_WAIT_MS;
  const lastCommits = await lastCommitsAt(page.ctx, page.project, at.commitHash, at.path, names, wait);
  return (
    <ProjectLayout page={page} tab="code" title={at.path ? `${at.path} at ${at.revision}` : `Files at ${at.revision}`} scripts={CODE_SCRIPTS}>
      <h1>{at.path ? `${name}/` : 'Files'}</h1>
      <CodeHeader page={page} view="files" at={at} names={result.names} download />
      <EditLinks page={page} at={at} kind="tree" />
      {result.entries.length === 0 ? (
        <p class="empty">This directory is empty.</p>
      ) : (
        <TreeTable
          projectPath={project}
          revision={at.revision}
          dir={at.path}
          entries={result.entries}
          lastCommits={lastCommits}
          pending={pendingLastCommits(project, codeUrl(project, 'files', at.revision, at.path), at.commitHash, at.path)}
        />
      )}
      {result.readme && <Readme readme={result.readme} projectPath={project} revision={at.revision} path={at.path} />}
    </ProjectLayout>
  );
}

/**
 * The gutter of the blame view: one line per file line, the first line of each range naming its
 * commit (short hash linking to it, author, date; the subject as the title) and, when git names
 * the lines' earlier place, a link blaming the file as it was before that commit (at its parent,
 * under the path it had there: renames are followed).
 */
function BlameGutter({ projectPath, blame }: { projectPath: string; blame: Blame }) {
  // written as one string: a long-lived file has thousands of ranges
  let html = '';
  for (const range of blame.ranges) {
    const commit = blame.commits.get(range.commitHash)!;
    const short = commit.hash.slice(0, 8);
    const prior = range.previous
      ? `<a href="${escapeHtml(codeUrl(projectPath, 'blame', range.previous.commitHash, range.previous.path))}" class="blame-prior" ` +
        `aria-label="Blame prior to ${short} (lines ${range.from}–${range.to})" title="Blame prior to this change">⟲</a>`
      : '<span class="blame-prior-none"></span>';
    const line = `${new Date(commit.authorDate).toISOString().slice(0, 10)} ${commit.authorName}\n${'\n'.repeat(range.to - range.from)}`;
    html +=
      `<span class="blame-range" title="${escapeHtml(commit.summary)}"><a href="${escapeHtml(commitUrl(projectPath, commit.hash))}">${short}</a>` +
      `${prior}${escapeHtml(line)}</span>`;
  }
  return <pre class="blame" aria-label="Commits of the lines" dangerouslySetInnerHTML={{ __html: html }} />;
}

type FileResult = Extract<BrowseResult, { kind: 'file' }>;

/** The content of a file page: a binary file's download, a too large file's notice, or the numbered (and blamed) lines. */
function FileBody({ projectPath, result, blame, raw }: { projectPath: string; result: FileResult; blame: Blame | null; raw: string }) {
  const name = result.at.path.split('/').pop()!;
  if (result.lfs && !result.lfs.stored) {
    return (
      <p class="file-notice" role="note">
        Stored with Git LFS ({formatCount(result.size, 'byte', 'bytes')}), but the server does not hold its object <code>{result.lfs.oid}</code>.
      </p>
    );
  }
  if (result.binary) {
    return (
      <p class="file-notice">
        Binary file ({formatCount(result.size, 'byte', 'bytes')}).{' '}
        <a href={raw} download={name}>
          Download {name}
        </a>
      </p>
    );
  }
  if (result.text === null) {
    return (
      <p class="file-notice" role="note">
        This file is too large to show ({formatCount(result.size, 'byte', 'bytes')}; the limit is {formatCount(MAX_VIEW_BYTES, 'byte', 'bytes')}).{' '}
        <a href={raw}>View it raw</a>
      </p>
    );
  }
  const text = result.text;
  // written as one string: a long file has tens of thousands of numbers
  let numbers = '';
  for (let n = 1, count = lineCount(text); n <= count; n++) numbers += `<a id="L${n}" href="#L${n}">${n}\n</a>`;
  return (
    <>
      {result.omittedLines > 0 && (
        <p class="file-notice" role="note">
          Only the first {formatCount(MAX_VIEW_LINES, 'line', 'lines')} are shown ({formatCount(result.omittedLines, 'more line', 'more lines')}).{' '}
          <a href={raw}>View it raw</a>
        </p>
      )}
      <div class="file-view">
        {blame && <BlameGutter projectPath={projectPath} blame={blame} />}
        <pre class="line-numbers" dangerouslySetInnerHTML={{ __html: numbers }} />
        <pre class="file-code">
          <code dangerouslySetInnerHTML={{ __html: highlightFile(result.entry.oid, result.at.path, text) }} />
        </pre>
      </div>
    </>
  );
}

/**
 * "Go to definition" of a file's view: a form naming a symbol, which without JavaScript opens the
 * project's symbol search (`/~code?mode=symbol`); definitions.js asks `/~definitions` instead and
 * goes to the one definition, lists several, or says there is none — also for a name Ctrl- or
 * ⌘-clicked in the code, or selected and followed with `d`.
 */
function DefinitionForm({ projectPath, path }: { projectPath: string; path: string }) {
  return (
    <form
      method="get"
      action="/~code"
      role="search"
      aria-label="Go to definition"
      class="definition-form"
      data-definitions={`/${projectPath}/~definitions?${new URLSearchParams({ path })}`}
    >
      <input type="hidden" name="mode" value="symbol" />
      <input type="hidden" name="project" value={projectPath} />
      <label for="definition-name">Go to definition</label>{' '}
      <input
        id="definition-name"
        name="q"
        size={20}
        maxLength={200}
        autocomplete="off"
        spellcheck={false}
        aria-keyshortcuts="d"
        aria-describedby="definition-hint"
        required
      />{' '}
      <button type="submit">Go</button>{' '}
      <span id="definition-hint" class="meta">
        or Ctrl- / ⌘-click a name in the code, or select it and press d
      </span>
      <div class="definition-results" aria-live="polite" data-definition-results />
    </form>
  );
}

/**
 * `/~definitions?name=<symbol>[&path=<file the name is read in>]`: the definitions of a name in
 * the project's code index as JSON, those of the file's language first —
 * `{ name, definitions: [{ name, kind, scope, path, line, url }] }` (at most 50; `url` the line
 * in the file at the commit indexed). 400 without a name; the project's read-code permission as
 * every files page.
 */
async function definitionsJson(page: ProjectPageContext) {
  const name = page.query.name ?? '';
  const project = page.project.path;
  const found = await findDefinitions(page.ctx, page.project.id, name, page.query.path || null);
  const definitions = found.slice(0, MAX_DEFINITIONS).map((d) => ({
    name: d.name,
    kind: d.kind,
    scope: d.scope,
    path: d.path,
    line: d.line,
    url: `${codeUrl(project, 'files', d.commit, d.path)}#L${d.line}`,
  }));
  return rawResponse('application/json; charset=utf-8', JSON.stringify({ name, definitions }), { 'cache-control': 'private, no-cache' });
}

/** A file of the file pages: its normal view (`files`) or its blame (`blame`, with `blame` read). */
function filePage(page: ProjectPageContext, view: 'files' | 'blame', result: FileResult, blame: Blame | null, definitions = false) {
  const project = page.project.path;
  const { at } = result;
  const name = at.path.split('/').pop()!;
  const raw = codeUrl(project, 'raw', at.revision, at.path);
  const other =
    view === 'files' ? (
      !result.binary &&
      result.text !== null && (
        <>
          {' · '}
          <a href={codeUrl(project, 'blame', at.revision, at.path)}>Blame</a>
        </>
      )
    ) : (
      <>
        {' · '}
        <a href={codeUrl(project, 'files', at.revision, at.path)}>Normal view</a>
      </>
    );
  const goToDefinition = definitions && !result.binary && result.text !== null;
  return (
    <ProjectLayout
      page={page}
      tab="code"
      title={`${view === 'blame' ? 'Blame of ' : ''}${at.path} at ${at.revision}`}
      scripts={goToDefinition ? [...CODE_SCRIPTS, 'definitions.js'] : CODE_SCRIPTS}
    >
      <h1>{name}</h1>
      <CodeHeader page={page} view={view} at={at} names={result.names}>
        {formatCount(result.size, 'byte', 'bytes')}
        {result.lfs && ' · stored with Git LFS'}
        {' · '}
        <a href={raw}>Raw</a>
        {other}
        {' · '}
      </CodeHeader>
      {view === 'files' && <EditLinks page={page} at={at} kind="file" />}
      {goToDefinition && <DefinitionForm projectPath={project} path={at.path} />}
      <FileBody projectPath={project} result={result} blame={blame} raw={raw} />
    </ProjectLayout>
  );
}

/** `?revision=…&path=…` (a revision selector) or nothing (the default branch): redirects to the view of that revision and path. */
async function chooseRevision(page: ProjectPageContext, view: 'files' | 'blame') {
  const chosen = page.query.revision?.trim();
  const revision = chosen || (await revisionNames(page.ctx, page.project)).defaultBranch;
  if (!revision) return redirect(`/${page.project.path}`);
  return redirect(codeUrl(page.project.path, view, revision, trimSlashes(page.query.path ?? '')));
}

export const filesPages: PageModule = {
  projectPages: [
    { method: 'GET', path: '/~files', handler: (page) => chooseRevision(page, 'files') },
    { method: 'GET', path: '/~blame', handler: (page) => chooseRevision(page, 'blame') },
    { method: 'GET', path: '/~files/*', handler: (page) => filesPage(page, page.params['*'] ?? '') },
    { method: 'GET', path: '/~find/*', handler: (page) => finderPage(page, page.params['*'] ?? '') },
    { method: 'GET', path: '/~paths/*', handler: (page) => pathsJson(page, page.params['*'] ?? '') },
    { method: 'GET', path: '/~last-commits/*', handler: (page) => lastCommitsJson(page, page.params['*'] ?? '') },
    { method: 'GET', path: '/~definitions', handler: definitionsJson },
    {
      method: 'GET',
      path: '/~blame/*',
      handler: async (page) => {
        const result = await blameAt(page.ctx, page.project, page.params['*'] ?? '');
        return filePage(page, 'blame', result, result.blame);
      },
    },
    {
      method: 'GET',
      path: '/~raw/*',
      handler: async (page) => {
        const file = await rawFileAt(page.ctx, page.project, page.params['*'] ?? '');
        const { contentType } = rawContentType(file.path, file.binary);
        return rawResponse(contentType, await file.open(), {
          ...userContentHeaders(file.path.split('/').pop()!, contentType),
          'content-length': String(file.size),
          'cache-control': 'private, no-cache',
        });
      },
    },
  ],
};
