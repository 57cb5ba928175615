/**
 * `/<project>/~pulls/<number>`: the request's description (Markdown), its activity in time order
 * (comments, updates with their commits, reviews, status and other changes), the comment form,
 * reviewers and assignees, approve / request changes, and the merge box. Every form posts to an
 * action below that calls the domain function of the matching API route (src/http/routes/pulls.ts,
 * pull-request-subresources.ts) and redirects back (303); a refusal shows the domain's message.
 */
import type { VNode } from 'preact';
import { getProjectRow } from '../../../domain/projects/index.js';
import {
  type ActivityEntry,
  createAssignment,
  createComment,
  createReview,
  deleteAssignment,
  deleteSourceBranch,
  discardPullRequest,
  listAssignments,
  mergeBox,
  type MergeBoxView,
  mergePullRequest,
  parseMergeStrategy,
  pullRequestActivity,
  type PullRequestChangeData,
  type PullRequestRow,
  reopenPullRequest,
  restoreSourceBranch,
  reviewOfUser,
  setMergeStrategy,
  updateReview,
  userIdByName,
  userNames,
} from '../../../domain/pulls/index.js';
import { avatarVersions } from '../../../domain/users/index.js';
import { BadRequest, NotFound } from '../../../errors.js';
import { avatarsOf } from '../../components/avatar.js';
import { Field, InlineForm, PostForm } from '../../components/forms.js';
import { Markdown } from '../../components/markdown.js';
import { Flash } from '../../components/flash.js';
import { ProjectLayout } from '../../components/project-layout.js';
import type { PageResult, ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { MergeBox, STRATEGY_LABELS } from './merge-box.js';
import { markThreadRead } from '../../../domain/notifications/index.js';
import { pullAction, PullHeader, pullActionUrl, pullUrl, requestOfPage, When } from './shared.js';
import { TextArea } from '../../components/controls.js';

/** The words of a change in the activity list. */
function changeText(data: PullRequestChangeData): string {
  switch (data['@type']) {
    case 'PullRequestApproveData':
      return 'approved';
    case 'PullRequestRequestedForChangesData':
      return 'requested changes';
    case 'PullRequestDiscardData':
      return 'discarded';
    case 'PullRequestReopenData':
      return 'reopened';
    case 'PullRequestMergeData':
      return data.reason ?? 'merged';
    case 'PullRequestTitleChangeData':
      return `changed the title from “${data.oldTitle}” to “${data.newTitle}”`;
    case 'PullRequestDescriptionChangeData':
      return 'changed the description';
    case 'PullRequestMergeStrategyChangeData':
      return `changed the merge strategy to ${STRATEGY_LABELS[data.newStrategy as keyof typeof STRATEGY_LABELS] ?? data.newStrategy}`;
    case 'PullRequestTargetBranchChangeData':
      return `changed the target branch from ${data.oldBranch} to ${data.newBranch}`;
    case 'PullRequestSourceBranchDeleteData':
      return 'deleted the source branch';
    case 'PullRequestSourceBranchRestoreData':
      return 'restored the source branch';
    case 'PullRequestReferencedFromIssueData':
      return 'referenced this from an issue';
    case 'PullRequestReferencedFromPullRequestData':
      return 'referenced this from a pull request';
    case 'PullRequestReferencedFromCommitData':
      return `referenced this from commit ${data.commitHash.slice(0, 8)}`;
    case 'PullRequestReferencedFromCodeCommentData':
      return 'referenced this from a code comment';
  }
}

function Activity({
  entries,
  names,
  avatarOf,
  projectPath,
}: {
  entries: ActivityEntry[];
  names: Map<number, string>;
  avatarOf: (userId: number | null) => VNode | null;
  projectPath: string;
}) {
  const who = (id: number | null) => (id === null ? 'Gitloom' : (names.get(id) ?? 'unknown'));
  return (
    <ol class="activity">
      {entries.map((entry) => {
        if (entry.kind === 'comment') {
          return (
            <li key={`c${entry.id}`} id={`comment-${entry.id}`} class="comment">
              <p class="meta">
                {avatarOf(entry.userId)}
                <strong>{who(entry.userId)}</strong>
                {' commented '}
                <When date={entry.date} />
              </p>
              <Markdown text={entry.content} />
            </li>
          );
        }
        if (entry.kind === 'change') {
          return (
            <li key={`x${entry.id}`} class="change">
              {avatarOf(entry.userId)}
              <strong>{who(entry.userId)}</strong>
              {` ${changeText(entry.data)} `}
              <span class="meta">
                <When date={entry.date} />
              </span>
            </li>
          );
        }
        return (
          <li key={`u${entry.id}`} class="update">
            <p>
              {`${entry.commits.length}${entry.more ? '+' : ''} ${entry.commits.length === 1 ? 'commit' : 'commits'} added `}
              <span class="meta">
                <When date={entry.date} />
              </span>
            </p>
            <ul class="commits">
              {entry.commits.map((c) => (
                <li key={c.hash}>
                  <a href={`/${projectPath}/~commits/${c.hash}`}>
                    <code>{c.hash.slice(0, 8)}</code>
                  </a>
                  {` ${c.subject}`}
                  <span class="meta">{` ${c.authorName}`}</span>
                </li>
              ))}
            </ul>
          </li>
        );
      })}
    </ol>
  );
}

/** The description, the activity and the comment form (or an invitation to sign in) of the detail page. */
function Conversation({
  page,
  pr,
  entries,
  names,
  avatarOf,
  draft,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  entries: ActivityEntry[];
  names: Map<number, string>;
  avatarOf: (userId: number | null) => VNode | null;
  draft: string;
}) {
  return (
    <div class="pr-main">
      <section aria-labelledby="description" class="description">
        <h2 id="description">Description</h2>
        {pr.description ? <Markdown text={pr.description} /> : <p class="empty">No description.</p>}
      </section>
      <section aria-labelledby="activity">
        <h2 id="activity">Activity</h2>
        <Activity entries={entries} names={names} avatarOf={avatarOf} projectPath={page.project.path} />
      </section>
      {page.user ? (
        <PostForm page={page} action={pullActionUrl(page, pr, 'comment')} label="Add a comment">
          <TextArea name="content" label="Comment (Markdown)" value={draft} rows={5} required />
          <p>
            <button type="submit">Comment</button>
          </p>
        </PostForm>
      ) : (
        <p>
          <a href={`/~login?${new URLSearchParams({ redirect: page.request.url })}`}>Sign in</a> to comment.
        </p>
      )}
    </div>
  );
}

/** A form of the side column posting one user name (a reviewer, an assignee) to `action`. */
function UserNameForm({ page, action, name, label, button }: { page: ProjectPageContext; action: string; name: string; label: string; button: string }) {
  return (
    <PostForm page={page} action={action} label={button}>
      <Field name={name} label={label} required />
      <p>
        <button type="submit">{button}</button>
      </p>
    </PostForm>
  );
}

/** The reviewers, the signed-in user's approve / request changes buttons and, for administrators, the add-reviewer form. */
function Reviewers({ page, pr, box, names }: { page: ProjectPageContext; pr: PullRequestRow; box: MergeBoxView; names: Map<number, string> }) {
  const me = page.user?.id;
  const myReview = box.reviews.find((r) => r.userId === me);
  const verdict = (status: 'APPROVED' | 'REQUESTED_FOR_CHANGES', label: string) => (
    <PostForm page={page} action={pullActionUrl(page, pr, 'review')} label={label}>
      <input type="hidden" name="status" value={status} />
      <button type="submit" disabled={myReview?.status === status}>
        {label}
      </button>
    </PostForm>
  );
  return (
    <section aria-labelledby="reviewers">
      <h2 id="reviewers">Reviewers</h2>
      {box.reviews.length === 0 ? (
        <p class="empty">No reviewer yet.</p>
      ) : (
        <ul class="plain">
          {box.reviews.map((r) => (
            <li key={r.id}>{names.get(r.userId) ?? 'unknown'}</li>
          ))}
        </ul>
      )}
      {page.user && me !== pr.submitterId && pr.status !== 'MERGED' && (
        <div class="review-actions">
          {verdict('APPROVED', 'Approve')}
          {verdict('REQUESTED_FOR_CHANGES', 'Request changes')}
        </div>
      )}
      {page.user?.isAdmin && pr.status !== 'MERGED' && (
        <UserNameForm page={page} action={pullActionUrl(page, pr, 'reviewers')} name="reviewer" label="Add reviewer (user name)" button="Add reviewer" />
      )}
    </section>
  );
}

/** The assignees, each removable, and the assign form, for those who may modify the request. */
function Assignees({
  page,
  pr,
  assignments,
  canModify,
  names,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  assignments: { id: number; userId: number }[];
  canModify: boolean;
  names: Map<number, string>;
}) {
  const editable = canModify && pr.status !== 'MERGED';
  return (
    <section aria-labelledby="assignees">
      <h2 id="assignees">Assignees</h2>
      {assignments.length === 0 ? (
        <p class="empty">Nobody assigned.</p>
      ) : (
        <ul class="plain">
          {assignments.map((a) => (
            <li key={a.id}>
              {names.get(a.userId) ?? 'unknown'}
              {editable && (
                <InlineForm
                  page={page}
                  action={pullActionUrl(page, pr, `assignees/${a.id}/delete`)}
                  label={`Unassign ${names.get(a.userId) ?? ''}`}
                  buttonClass="link"
                >
                  remove
                </InlineForm>
              )}
            </li>
          ))}
        </ul>
      )}
      {editable && <UserNameForm page={page} action={pullActionUrl(page, pr, 'assignees')} name="assignee" label="Assign to (user name)" button="Assign" />}
    </section>
  );
}

/** Renders the detail page of `pr`, with a refused action's message and the comment draft. */
export async function detailPage(page: ProjectPageContext, pr: PullRequestRow, error: string | null = null, draft = ''): Promise<VNode> {
  const [entries, box, assignments, source] = await Promise.all([
    pullRequestActivity(page.ctx, pr),
    mergeBox(page.ctx, pr),
    listAssignments(page.ctx, pr.id),
    pr.sourceProjectId === null ? Promise.resolve(null) : getProjectRow(page.ctx.db, pr.sourceProjectId),
  ]);
  const names = await userNames(page.ctx, [
    pr.submitterId,
    ...entries.map((e) => (e.kind === 'update' ? null : e.userId)),
    ...box.reviews.map((r) => r.userId),
    ...assignments.map((a) => a.userId),
  ]);
  const avatarOf = avatarsOf(await avatarVersions(page.ctx.db, names.keys()));
  return (
    <ProjectLayout page={page} tab="pulls" title={`#${pr.number} ${pr.title}`}>
      <PullHeader page={page} pr={pr} tab="overview" submitter={names.get(pr.submitterId) ?? 'unknown'} sourcePath={source?.path ?? null} />
      <Flash error={error} />
      <div class="pr-grid">
        <Conversation page={page} pr={pr} entries={entries} names={names} avatarOf={avatarOf} draft={draft} />
        <aside class="pr-side">
          <Reviewers page={page} pr={pr} box={box} names={names} />
          <Assignees page={page} pr={pr} assignments={assignments} canModify={box.canModify} names={names} />
          <MergeBox page={page} pr={pr} box={box} names={names} />
        </aside>
      </div>
    </ProjectLayout>
  );
}

/** Posts a review of the signed-in user: updates their review when they have one, else adds it (as `POST /~api/pull-request-reviews[/{id}]`). */
async function review(page: ProjectPageContext, pr: PullRequestRow): Promise<void> {
  const status = page.form.status;
  if (status !== 'APPROVED' && status !== 'REQUESTED_FOR_CHANGES') throw new BadRequest(`Invalid review status: ${status ?? ''}`);
  const mine = page.user ? await reviewOfUser(page.ctx, pr, page.user.id) : null;
  if (mine) await updateReview(page.ctx, mine.id, { status });
  else await createReview(page.ctx, { requestId: pr.id, status });
}

/** A POST action of the detail page: `run` with the request, then back to the page (or `anchor` on it). */
function action(path: string, run: (page: ProjectPageContext, pr: PullRequestRow) => Promise<unknown>, anchor = ''): ProjectPageRoute {
  return pullAction(
    path,
    run,
    (page, pr) => pullUrl(page.project.path, pr.number, anchor),
    (page, pr, error) => detailPage(page, pr, error, path === 'comment' ? page.form.content : ''),
  );
}

/** The routes of the detail page. */
export const detailRoutes: ProjectPageRoute[] = [
  {
    method: 'GET',
    path: '/~pulls/:number',
    handler: async (page): Promise<PageResult> => {
      const pr = await requestOfPage(page);
      // opening the request reads its notification
      await markThreadRead(page.ctx, 'PullRequest', pr.id);
      return detailPage(page, pr);
    },
  },
  action('comment', (page, pr) => createComment(page.ctx, { requestId: pr.id, content: page.form.content ?? '' }), '#activity'),
  action('review', review, '#reviewers'),
  action(
    'reviewers',
    async (page, pr) => createReview(page.ctx, { requestId: pr.id, userId: await userIdByName(page.ctx, page.form.reviewer ?? '') }),
    '#reviewers',
  ),
  action(
    'assignees',
    async (page, pr) => createAssignment(page.ctx, { requestId: pr.id, userId: await userIdByName(page.ctx, page.form.assignee ?? '') }),
    '#assignees',
  ),
  action(
    'assignees/:assignmentId/delete',
    async (page, pr) => {
      const id = /^\d{1,12}$/.test(page.params.assignmentId) ? Number(page.params.assignmentId) : Number.NaN;
      if (!(await listAssignments(page.ctx, pr.id)).some((a) => a.id === id)) throw new NotFound(`Assignment not found: ${page.params.assignmentId}`);
      await deleteAssignment(page.ctx, id);
    },
    '#assignees',
  ),
  action('merge-strategy', (page, pr) => setMergeStrategy(page.ctx, pr.id, parseMergeStrategy(page.form.strategy ?? '')), '#merge-box'),
  action('merge', (page, pr) => mergePullRequest(page.ctx, pr.id, page.form.message ?? ''), '#merge-box'),
  action('discard', (page, pr) => discardPullRequest(page.ctx, pr.id, page.form.note ?? ''), '#merge-box'),
  action('reopen', (page, pr) => reopenPullRequest(page.ctx, pr.id, page.form.note ?? ''), '#merge-box'),
  action('delete-source-branch', (page, pr) => deleteSourceBranch(page.ctx, pr.id, page.form.note ?? ''), '#merge-box'),
  action('restore-source-branch', (page, pr) => restoreSourceBranch(page.ctx, pr.id, page.form.note ?? ''), '#merge-box'),
];
