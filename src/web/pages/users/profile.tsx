/**
 * `/~users/<id or login name>` (docs/compatibility.md#gitloom-differs-web-ui "Profiles"; OneDev's
 * user profile page): a user's name, full name and avatar, and their recent work — pull
 * requests and issues they opened or commented on, builds they submitted — through the query
 * languages run as the visitor, so only what the visitor can read appears (no title, count or
 * trace of anything else). Signed-in visitors only.
 */
import { queryBuilds } from '../../../domain/builds/index.js';
import { queryIssues } from '../../../domain/issues/index.js';
import { queryPullRequests } from '../../../domain/pulls/index.js';
import { userCard } from '../../../domain/users/index.js';
import { activityLists, ActivitySection } from '../../components/activity.js';
import { Avatar } from '../../components/avatar.js';
import { Layout } from '../../components/layout.js';
import type { PageModule } from '../../page.js';

/** Entries per section. */
const LIMIT = 10;

export const profilePages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~users/:key',
      access: 'user',
      handler: async (page) => {
        const user = await userCard(page.ctx, page.params.key ?? '');
        // login names are `\w[\w.-]*`: safe inside a quoted query value
        const by = (operator: string) => `${operator} "${user.name}"`;
        // the built-in users (id ≤ 0) are no login a query can name
        const [pulls, issues, commentedPulls, commentedIssues, builds] =
          user.id <= 0
            ? [[], [], [], [], []]
            : await Promise.all([
                queryPullRequests(page.ctx, by('submitted by'), 0, LIMIT),
                queryIssues(page.ctx, by('submitted by'), 0, LIMIT),
                queryPullRequests(page.ctx, by('commented by'), 0, LIMIT),
                queryIssues(page.ctx, by('commented by'), 0, LIMIT),
                queryBuilds(page.ctx, by('submitted by'), 0, LIMIT),
              ]);
        const { opened, commented, submitted } = await activityLists(
          page,
          { opened: { pulls, issues }, commented: { pulls: commentedPulls, issues: commentedIssues }, submitted: { builds } },
          LIMIT,
        );
        const title = user.fullName ? `${user.fullName} (${user.name})` : user.name;
        return (
          <Layout page={page} title={title}>
            <div class="profile-head">
              <Avatar userId={user.id} version={user.avatarVersion} size={96} />
              <div>
                <h1>{user.fullName ?? user.name}</h1>
                <p class="meta">{user.name}</p>
              </div>
            </div>
            <div class="grid">
              <ActivitySection id="opened" title="Pull requests and issues opened" items={opened} empty="Nothing you can read." />
              <ActivitySection id="commented" title="Commented on" items={commented} empty="Nothing you can read." />
              <ActivitySection id="builds" title="Builds submitted" items={submitted} empty="Nothing you can read." />
            </div>
          </Layout>
        );
      },
    },
  ],
};
