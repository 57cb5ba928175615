/**
 * `/~projects`: the projects the visitor can see, filtered by the project query language, and a
 * "New project" link for those who may create root projects.
 */
import { queryProjects } from '../../domain/projects/index.js';
import { BadRequest } from '../../errors.js';
import { Layout } from '../components/layout.js';
import { QueryBox } from '../components/query-box.js';
import { SavedQueries } from '../components/saved-queries.js';
import type { PageModule } from '../page.js';

const PAGE_SIZE = 100;

export const projectListPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~projects',
      handler: async (page) => {
        const query = page.query.query ?? '';
        let error: string | null = null;
        let projects: Awaited<ReturnType<typeof queryProjects>> = [];
        try {
          projects = await queryProjects(page.ctx, query, 0, PAGE_SIZE);
        } catch (failure) {
          if (!(failure instanceof BadRequest)) throw failure;
          page.reply.code(400);
          error = failure.message;
        }
        return (
          <Layout page={page} title="Projects">
            <div class="heading-row">
              <h1>Projects</h1>
              {page.ctx.actor.canCreateRootProjects && (
                <a class="button" href="/~projects/new">
                  New project
                </a>
              )}
            </div>
            <QueryBox action="/~projects" query={query} example={'"Name" is "app*"'} error={error} />
            {await SavedQueries({ page, kind: 'project', action: '/~projects' })}
            {!error && projects.length === 0 && <p class="empty">No project found.</p>}
            {projects.length > 0 && (
              <ul class="list">
                {projects.map((p) => (
                  <li key={p.id}>
                    <a href={`/${p.path}`}>{p.path}</a>
                    {p.description && <span class="meta">{` — ${p.description}`}</span>}
                  </li>
                ))}
              </ul>
            )}
          </Layout>
        );
      },
    },
  ],
};
