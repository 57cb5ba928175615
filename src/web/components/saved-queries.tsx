/**
 * The saved queries of a list page's query box: links loading each saved query, a form saving
 * the current query under a name, delete buttons and, for issues and pull requests, watch
 * toggles. The lists are the personalizations the API serves (src/domain/personalizations/
 * saved-queries.ts): a project page uses the caller's `<kind>-query-personalization` of the
 * project, a page outside projects the caller's queries-and-watches. Forms post to
 * `/~saved-queries` (src/web/pages/saved-queries.tsx), which comes back to the list.
 *
 * Drop-in, under the `<QueryBox>` of a list page:
 * `{await SavedQueries({ page, kind: 'pullRequest', action: '/~pulls' })}`
 */
import type { VNode } from 'preact';
import { listSavedQueries, type SavedQueryKind } from '../../domain/personalizations/index.js';
import type { PageContext, ProjectPageContext } from '../page.js';
import { HiddenFields, InlineForm, PostForm } from './forms.js';

export interface SavedQueriesProps {
  /** The list page (a project page lists the project's personalization). */
  page: PageContext;
  /** The personalization kind of the list (`project` for the project list). */
  kind: SavedQueryKind;
  /** The list page's URL, where a saved query is loaded as `?query=…`. */
  action: string;
}

/** The project of a project page, else null. */
function projectIdOf(page: PageContext): number | null {
  return 'project' in page ? (page as ProjectPageContext).project.id : null;
}

/** Renders the saved queries of the visitor (nothing for anonymous visitors). */
export async function SavedQueries({ page, kind, action }: SavedQueriesProps): Promise<VNode | null> {
  if (!page.user) return null;
  const projectId = projectIdOf(page);
  const { queries, watched } = await listSavedQueries(page.ctx, kind, projectId);
  const current = page.query.query ?? '';
  const fields = (op: string, name?: string) => ({
    op,
    kind,
    project: projectId === null ? '' : String(projectId),
    return: action,
    ...(name !== undefined && { name }),
  });
  return (
    <section class="saved-queries" aria-labelledby="saved-queries-heading">
      <h2 id="saved-queries-heading">Saved queries</h2>
      {queries.length === 0 && <p class="meta">No saved query yet.</p>}
      {queries.length > 0 && (
        <ul>
          {queries.map((q) => (
            <li key={q.name}>
              <a
                href={q.query === null ? action : `${action}?${new URLSearchParams({ query: q.query })}`}
                aria-current={(q.query ?? '') === current ? 'true' : undefined}
              >
                {q.name}
              </a>
              {watched && (
                <InlineForm
                  page={page}
                  action="/~saved-queries"
                  label={`Watch ${q.name}`}
                  fields={fields(watched.has(q.name) ? 'unwatch' : 'watch', q.name)}
                  buttonClass="link"
                  buttonLabel={`${watched.has(q.name) ? 'Unwatch' : 'Watch'} saved query ${q.name}`}
                >
                  {watched.has(q.name) ? 'Unwatch' : 'Watch'}
                </InlineForm>
              )}
              <InlineForm
                page={page}
                action="/~saved-queries"
                label={`Delete ${q.name}`}
                fields={fields('delete', q.name)}
                buttonClass="link"
                buttonLabel={`Delete saved query ${q.name}`}
              >
                Delete
              </InlineForm>
            </li>
          ))}
        </ul>
      )}
      <PostForm page={page} action="/~saved-queries" class="save-query" label="Save the current query">
        <HiddenFields fields={fields('save')} />
        <input type="hidden" name="query" value={current} />
        <label for="saved-query-name">Save the current query as</label>
        <input id="saved-query-name" name="name" required maxLength={255} />
        <button type="submit">Save query</button>
      </PostForm>
    </section>
  );
}
