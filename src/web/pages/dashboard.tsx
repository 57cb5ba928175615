/**
 * The dashboard `/` of a signed-in user (docs/compatibility.md#gitloom-differs-web-ui "Dashboard"):
 * the projects they are a member of (by their own authorization, a group's, or as owner) with
 * their roles; their pending work — pull requests to review, pull requests and issues assigned
 * to them, their own open requests — through the query languages (the API's
 * `/~api/pulls?query=…`, `/~api/issues?query=…`); and the recent activity of what they can read.
 * A fixed number of queries whatever the number of projects.
 */
import { queryBuilds } from '../../domain/builds/index.js';
import { queryIssues } from '../../domain/issues/index.js';
import { memberProjects } from '../../domain/projects/index.js';
import { queryPullRequests } from '../../domain/pulls/index.js';
import { activityLists, ActivitySection } from '../components/activity.js';
import { Layout } from '../components/layout.js';
import { redirect, type PageModule } from '../page.js';

/** Entries per section. */
const LIMIT = 10;
/** Most member projects listed (the rest through "All projects"). */
const PROJECT_LIMIT = 50;

export const dashboardPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/',
      handler: async (page) => {
        if (!page.user) return redirect('/~projects');
        const [member, toReview, assignedPulls, assignedIssues, mine, recentPulls, recentIssues, recentBuilds] = await Promise.all([
          memberProjects(page.ctx, PROJECT_LIMIT),
          queryPullRequests(page.ctx, 'open and to be reviewed by me', 0, LIMIT),
          queryPullRequests(page.ctx, 'open and assigned to me', 0, LIMIT),
          queryIssues(page.ctx, '"State" is "Open" and "Assignees" is me', 0, LIMIT),
          queryPullRequests(page.ctx, 'open and submitted by me', 0, LIMIT),
          queryPullRequests(page.ctx, '', 0, LIMIT),
          queryIssues(page.ctx, '', 0, LIMIT),
          queryBuilds(page.ctx, '', 0, LIMIT),
        ]);
        const { review, assigned, own, recent } = await activityLists(
          page,
          {
            review: { pulls: toReview },
            assigned: { pulls: assignedPulls, issues: assignedIssues },
            own: { pulls: mine },
            recent: { pulls: recentPulls, issues: recentIssues, builds: recentBuilds },
          },
          2 * LIMIT,
        );
        return (
          <Layout page={page} title="Dashboard">
            <h1>Dashboard</h1>
            <div class="grid">
              <section aria-labelledby="my-projects">
                <h2 id="my-projects">My projects</h2>
                {member.projects.length === 0 ? (
                  <p class="empty">You are a member of no project yet.</p>
                ) : (
                  <ul class="list member-projects">
                    {member.projects.map((p) => (
                      <li key={p.id}>
                        <a href={`/${p.path}`}>{p.path}</a>
                        <span class="meta">
                          {` ${p.roles.map((r) => (r.groupName === null ? r.roleName : `${r.roleName} (group ${r.groupName})`)).join(', ')}`}
                        </span>
                      </li>
                    ))}
                  </ul>
                )}
                <p>
                  <a href="/~projects">{member.more ? 'All projects (more than listed)' : 'All projects'}</a>
                </p>
              </section>
              <ActivitySection id="to-review" title="Pull requests to review" items={review} empty="Nothing to review." />
              <ActivitySection id="assigned" title="Assigned to me" items={assigned} empty="Nothing assigned to you." />
              <ActivitySection id="my-pulls" title="My open pull requests" items={own} empty="No open pull request of yours." />
              <ActivitySection id="recent-activity" title="Recent activity" items={recent} empty="No activity yet." />
            </div>
          </Layout>
        );
      },
    },
  ],
};
