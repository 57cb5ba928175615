/**
 * What a visitor chose of a diff's view, read from the request — the layout (`?view=unified|split`,
 * else the signed-in user's remembered choice, else unified), the gaps of unchanged lines expanded
 * (`?expand=<file key>.<gap>,…`) and the collapsed or left-out files loaded (`?load=<file key>,…`) — with
 * the blobs' texts the view highlights; and the control switching the layout: a form remembering
 * the choice for a signed-in user (`POST /~diff-layout`), a link for anyone else.
 */
import { type DiffLayout, getDiffLayout, parseDiffLayout } from '../../domain/diff-views/index.js';
import { type CommitDiff, diffBlobTexts, diffCommits, type FileDiff } from '../../domain/repositories/index.js';
import type { PageContext } from '../page.js';
import { diffFileKey, isLeftOut, type DiffViewState } from './diff.js';
import { PostForm } from './forms.js';

/** The most gaps or files a URL may expand or load (more are ignored). */
const MAX_TOKENS = 200;

/** The tokens of a comma-separated parameter that match `pattern`. */
function tokens(value: string | undefined, pattern: RegExp): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .filter((t) => pattern.test(t))
      .slice(0, MAX_TOKENS),
  );
}

/** The page's URL (path and query) with `changes` applied to its query; a null value removes the parameter. */
export function withQuery(page: PageContext, changes: Record<string, string | null>): string {
  return queryChanger(page)(changes);
}

/** {@link withQuery} of one page, its URL parsed once (a diff asks for a link per gap and file). */
function queryChanger(page: PageContext): (changes: Record<string, string | null>) => string {
  const url = new URL(page.request.url, 'http://gitloom.invalid');
  return (changes) => {
    const params = new URLSearchParams(url.searchParams);
    for (const [name, value] of Object.entries(changes)) {
      if (value === null) params.delete(name);
      else params.set(name, value);
    }
    const query = params.toString();
    return query ? `${url.pathname}?${query}` : url.pathname;
  };
}

/**
 * The view state of `diff` on `page`: the layout chosen, what is expanded and loaded — the files
 * the diff's budget left out read on their own when loaded — and the texts of the blobs shown
 * (read from `projectId`, whose code the caller may read).
 */
export async function diffViewState(page: PageContext, projectId: number, diff: CommitDiff): Promise<DiffViewState> {
  const expanded = tokens(page.query.expand, /^[0-9a-f]{12}\.\d{1,6}$/);
  const loaded = tokens(page.query.load, /^[0-9a-f]{12}$/);
  const [layout, loadedFiles] = await Promise.all([
    parseDiffLayout(page.query.view) ?? getDiffLayout(page.ctx).then((l) => l ?? 'unified'),
    leftOutFiles(page, projectId, diff, loaded),
  ]);
  const shown = [...diff.files, ...loadedFiles.values()];
  const blobs = shown.flatMap((f) => (f.hunks.length > 0 ? [f.oldBlob, f.newBlob] : [])).filter((b): b is string => b !== null);
  const texts = await diffBlobTexts(page.ctx, projectId, blobs);
  const join = (set: ReadonlySet<string>, more: string) => [...set, more].join(',');
  const changed = queryChanger(page);
  return {
    layout,
    texts,
    expanded,
    loaded,
    loadedFiles,
    href: (change) =>
      changed({
        ...(change.expand ? { expand: join(expanded, change.expand) } : {}),
        ...(change.load ? { load: join(loaded, change.load) } : {}),
      }),
  };
}

/** The diffs of the `loaded` files the budget of `diff` left out, read together on their own, by file key. */
async function leftOutFiles(page: PageContext, projectId: number, diff: CommitDiff, loaded: ReadonlySet<string>): Promise<Map<string, FileDiff>> {
  if (loaded.size === 0) return new Map();
  const wanted = diff.files.filter((f) => isLeftOut(f) && loaded.has(diffFileKey(f)));
  if (wanted.length === 0) return new Map();
  const paths = [...new Set(wanted.flatMap((f) => [f.oldPath, f.newPath]).filter((p): p is string => p !== null))];
  const alone = await diffCommits(page.ctx, projectId, diff.oldCommit, diff.newCommit, {}, paths);
  const keys = new Set(wanted.map(diffFileKey));
  return new Map(alone.files.filter((f) => keys.has(diffFileKey(f))).map((f) => [diffFileKey(f), f]));
}

const LAYOUTS: { layout: DiffLayout; label: string }[] = [
  { layout: 'unified', label: 'Unified' },
  { layout: 'split', label: 'Split' },
];

/**
 * The layout switch of a diff: for a signed-in user a form per layout posting to `/~diff-layout`
 * (remembered, then back to this page), for an anonymous visitor links with `?view=`. The current
 * layout is marked `aria-current`.
 */
export function DiffLayoutToggle({ page, layout }: { page: PageContext; layout: DiffLayout }) {
  return (
    <div class="diff-layout-toggle" role="group" aria-label="Diff layout">
      {LAYOUTS.map((l) =>
        page.user ? (
          <PostForm key={l.layout} page={page} action="/~diff-layout" label={`${l.label} diff layout`}>
            <input type="hidden" name="layout" value={l.layout} />
            <input type="hidden" name="back" value={withQuery(page, { view: null })} />
            <button type="submit" aria-pressed={l.layout === layout ? 'true' : 'false'}>
              {l.label}
            </button>
          </PostForm>
        ) : (
          <a key={l.layout} href={withQuery(page, { view: l.layout })} aria-current={l.layout === layout ? 'true' : undefined}>
            {l.label}
          </a>
        ),
      )}
    </div>
  );
}
