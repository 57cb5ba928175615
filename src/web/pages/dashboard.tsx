/**
 * The dashboard `/` of a signed-in user (docs/compatibility.md#gitloom-differs-web-ui): their projects, pull requests to
 * review, their own open requests and recent builds, through the API's query functions
 * (the same languages as `/~api/projects?query=…`, `/~api/pulls?query=…`, `/~api/builds?query=…`).
 */
import { queryBuilds } from '../../domain/builds/index.js';
import { getProjectRow, queryProjects } from '../../domain/projects/index.js';
import { queryPullRequests } from '../../domain/pulls/index.js';
import { Layout } from '../components/layout.js';
import { redirect, type PageContext, type PageModule } from '../page.js';

const LIMIT = 10;

/** Paths of the projects with these ids (the rows were already visible to the caller). */
async function projectPaths(page: PageContext, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  const rows = await Promise.all(unique.map((id) => getProjectRow(page.ctx.db, id)));
  return new Map(rows.map((row) => [row.id, row.path]));
}

export const dashboardPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/',
      handler: async (page) => {
        if (!page.user) return redirect('/~projects');
        const [projects, toReview, mine, builds] = await Promise.all([
          queryProjects(page.ctx, 'owned by me', 0, LIMIT),
          queryPullRequests(page.ctx, '"Status" is "Open" and to be reviewed by me', 0, LIMIT),
          queryPullRequests(page.ctx, '"Status" is "Open" and submitted by me', 0, LIMIT),
          queryBuilds(page.ctx, '', 0, LIMIT),
        ]);
        const paths = await projectPaths(page, [...toReview, ...mine].map((p) => p.targetProjectId).concat(builds.map((b) => b.projectId)));
        const pullList = (pulls: typeof mine, empty: string) =>
          pulls.length === 0 ? (
            <p class="empty">{empty}</p>
          ) : (
            <ul class="list">
              {pulls.map((pull) => (
                <li key={pull.id}>
                  <a href={`/${paths.get(pull.targetProjectId)}/~pulls/${pull.number}`}>{pull.title}</a>
                  <span class="meta">{` ${paths.get(pull.targetProjectId)}#${pull.number}`}</span>
                </li>
              ))}
            </ul>
          );
        return (
          <Layout page={page} title="Dashboard">
            <h1>Dashboard</h1>
            <div class="grid">
              <section aria-labelledby="my-projects">
                <h2 id="my-projects">My projects</h2>
                {projects.length === 0 ? (
                  <p class="empty">You own no project yet.</p>
                ) : (
                  <ul class="list">
                    {projects.map((p) => (
                      <li key={p.id}>
                        <a href={`/${p.path}`}>{p.path}</a>
                      </li>
                    ))}
                  </ul>
                )}
                <p>
                  <a href="/~projects">All projects</a>
                </p>
              </section>
              <section aria-labelledby="to-review">
                <h2 id="to-review">Pull requests to review</h2>
                {pullList(toReview, 'Nothing to review.')}
              </section>
              <section aria-labelledby="my-pulls">
                <h2 id="my-pulls">My open pull requests</h2>
                {pullList(mine, 'No open pull request of yours.')}
              </section>
              <section aria-labelledby="recent-builds">
                <h2 id="recent-builds">Recent builds</h2>
                {builds.length === 0 ? (
                  <p class="empty">No build yet.</p>
                ) : (
                  <ul class="list">
                    {builds.map((b) => (
                      <li key={b.id}>
                        <a href={`/${paths.get(b.projectId)}/~builds/${b.number}`}>{`${paths.get(b.projectId)}#${b.number}`}</a>
                        {` ${b.jobName} `}
                        <span class={`status status-${b.status.toLowerCase()}`}>{b.status}</span>
                      </li>
                    ))}
                  </ul>
                )}
              </section>
            </div>
          </Layout>
        );
      },
    },
  ],
};
