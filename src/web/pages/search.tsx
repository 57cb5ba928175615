/**
 * `/~search?q=<text>`: global search (docs/compatibility.md#global-search) — the projects, pull
 * requests, issues, builds (and, for administrators, users) matching the text, a few of each with
 * a link to the kind's list for the rest. The header's search box submits here; `/` focuses it
 * and the arrow keys move through the results (search.js).
 */
import type { ComponentChildren } from 'preact';
import { globalSearch, MAX_SEARCH_LENGTH, type GlobalSearchResults } from '../../domain/search/index.js';
import { BadRequest } from '../../errors.js';
import { Flash } from '../components/flash.js';
import { Layout } from '../components/layout.js';
import type { PageModule } from '../page.js';
import { pullUrl } from './pulls/shared.js';

/** Rows shown per kind. */
const PER_KIND = 8;

/** One kind of result: a heading, its rows, and a link to its list when it may hold more. */
function Group({ title, more, rows }: { title: string; more: string | null; rows: { key: string; href: string; label: ComponentChildren }[] }) {
  if (rows.length === 0) return null;
  const id = `search-${title.toLowerCase().replace(/\s+/g, '-')}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <ul class="list search-results">
        {rows.map((row) => (
          <li key={row.key}>
            <a href={row.href}>{row.label}</a>
          </li>
        ))}
      </ul>
      {more && rows.length >= PER_KIND && (
        <p>
          <a href={more}>{`All matching ${title.toLowerCase()}`}</a>
        </p>
      )}
    </section>
  );
}

function Results({ found }: { found: GlobalSearchResults }) {
  const path = (id: number) => found.projectPaths.get(id) ?? '';
  const list = (kind: string, query: string) => `/~${kind}?${new URLSearchParams({ query })}`;
  const total = found.projects.length + found.pullRequests.length + found.issues.length + found.builds.length + found.users.length;
  if (total === 0) return <p class="empty">{`Nothing matches “${found.text}”.`}</p>;
  return (
    <>
      <Group
        title="Projects"
        more={list('projects', found.queries.projects)}
        rows={found.projects.map((p) => ({ key: String(p.id), href: `/${p.path}`, label: p.path }))}
      />
      <Group
        title="Pull requests"
        more={list('pulls', found.queries.pulls)}
        rows={found.pullRequests.map((pr) => ({
          key: String(pr.id),
          href: pullUrl(path(pr.targetProjectId), pr.number),
          label: `${path(pr.targetProjectId)}#${pr.number} ${pr.title}`,
        }))}
      />
      <Group
        title="Issues"
        more={list('issues', found.queries.issues)}
        rows={found.issues.map((issue) => ({
          key: String(issue.id),
          href: `/${path(issue.projectId)}/~issues/${issue.number}`,
          label: `${path(issue.projectId)}#${issue.number} ${issue.title}`,
        }))}
      />
      <Group
        title="Builds"
        more={list('builds', found.queries.builds)}
        rows={found.builds.map((build) => ({
          key: String(build.id),
          href: `/${path(build.projectId)}/~builds/${build.number}`,
          label: `${path(build.projectId)}#${build.number} ${build.jobName}${build.version ? ` (${build.version})` : ''}`,
        }))}
      />
      <Group
        title="Users"
        more={null}
        rows={found.users.map((user) => ({
          key: String(user.id),
          href: `/~administration/users/${user.id}`,
          label: user.fullName ? `${user.name} (${user.fullName})` : user.name,
        }))}
      />
    </>
  );
}

export const searchPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~search',
      handler: async (page) => {
        const text = page.query.q ?? '';
        let found: GlobalSearchResults | null = null;
        let error: string | null = null;
        if (text.trim() !== '') {
          try {
            found = await globalSearch(page.ctx, text, PER_KIND);
          } catch (failure) {
            if (!(failure instanceof BadRequest)) throw failure;
            page.reply.code(400);
            error = failure.message;
          }
        }
        return (
          <Layout page={page} title={found ? `Search: ${found.text}` : 'Search'}>
            <h1>Search</h1>
            <form method="get" action="/~search" role="search" class="search-form">
              <label for="search-page-q">Search projects, pull requests, issues and builds</label>
              <input id="search-page-q" type="search" name="q" value={text} maxLength={MAX_SEARCH_LENGTH} aria-describedby="search-hint" />
              <button type="submit">Search</button>
              <p id="search-hint" class="meta">
                Words match titles and descriptions; <code>app#12</code> or <code>#12</code> finds number 12.
              </p>
            </form>
            <Flash error={error} />
            {found && (
              <p>
                <a href={`/~code?${new URLSearchParams({ q: found.text })}`}>{`Search code for “${found.text}”`}</a>
              </p>
            )}
            {found && <Results found={found} />}
          </Layout>
        );
      },
    },
  ],
};
