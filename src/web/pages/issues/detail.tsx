/**
 * `/<project>/~issues/<number>`: description, fields, milestones, state with its transitions,
 * watchers, votes, comments with a Markdown preview, references and fixing commits and pull
 * requests — and the actions its forms post.
 */
import { markThreadRead } from '../../../domain/notifications/index.js';
import type { VNode } from 'preact';
import {
  createIssueComment,
  createIssueVote,
  createIssueWatch,
  deleteIssueVote,
  ISSUE_FIELDS,
  ISSUE_STATES,
  issueActivity,
  issueByNumber,
  listIssueVotes,
  listIssueWatches,
  setIssueMilestones,
  transitIssueState,
  updateIssueWatch,
} from '../../../domain/issues/index.js';
import { queryMilestones } from '../../../domain/projects/index.js';
import { avatarVersions } from '../../../domain/users/index.js';
import { BadRequest } from '../../../errors.js';
import { avatarsOf } from '../../components/avatar.js';
import { PostForm, InlineForm } from '../../components/forms.js';
import { Markdown } from '../../components/markdown.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { redirect, type PageContext, type PageResult, type ProjectPageContext, type ProjectPageRoute } from '../../page.js';

/** Most milestones offered in the milestone form (open ones of the project and its ancestors). */
const MILESTONE_CHOICES = 100;
/** The button label of a transition to a state. */
const TRANSITION_LABELS: Record<string, string> = { Open: 'Reopen', Closed: 'Close' };

const when = (ms: number) => <time datetime={new Date(ms).toISOString()}>{new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}</time>;

/** The comment form with its Markdown preview (preview.js posts to `/~markdown-preview`). */
function MarkdownForm({
  page,
  action,
  project,
  name,
  label,
  submit,
  required,
  value,
}: {
  page: PageContext;
  action: string;
  project: string;
  name: string;
  label: string;
  submit: string;
  required?: boolean;
  value?: string;
}) {
  const id = `field-${name}`;
  return (
    <PostForm page={page} action={action} class="markdown-form" label={`${submit} form`}>
      <input type="hidden" name="project" value={project} />
      <p class="field">
        <label for={id}>{label}</label>
        <textarea id={id} name={name} rows={6} required={required} data-preview-source="">
          {value ?? ''}
        </textarea>
      </p>
      <div class="markdown-preview" id={`${id}-preview`} aria-live="polite" hidden />
      <p class="actions">
        <button type="submit" formaction="/~markdown-preview" formnovalidate data-preview={`#${id}`}>
          Preview
        </button>
        <button type="submit">{submit}</button>
      </p>
    </PostForm>
  );
}

/** GET `/<project>/~issues/<number>`. */
async function issuePage(page: ProjectPageContext): Promise<PageResult> {
  const loaded = await issueByNumber(page.ctx, page.project.id, Number(page.params.number));
  const { issue, permissions } = loaded;
  // opening the issue reads its notification
  await markThreadRead(page.ctx, 'Issue', issue.id);
  const activity = await issueActivity(page.ctx, loaded);
  const avatarOf = avatarsOf(await avatarVersions(page.ctx.db, activity.names.keys()));
  const schedulable =
    page.user && permissions.scheduleIssues ? await queryMilestones(page.ctx, page.project.id, { closed: false }, 0, MILESTONE_CHOICES) : null;
  const view: IssueView = {
    page,
    issue,
    activity,
    canManage: Boolean(page.user && permissions.manageIssues),
    schedulable,
    base: `/${page.project.path}/~issues/${issue.number}`,
    name: (id) => (id === null ? 'system' : (activity.names.get(id) ?? 'unknown')),
    avatarOf,
  };
  return (
    <ProjectLayout page={page} tab="issues" title={`#${issue.number} ${issue.title}`} scripts={['preview.js']}>
      <h1>
        {issue.title} <span class="meta">{`#${issue.number}`}</span>
      </h1>
      <p class="meta">
        <span class={`state state-${issue.state.toLowerCase()}`}>{issue.state}</span>
        {` opened by ${view.name(issue.submitterId)} `}
        {when(issue.submitDate)}
        {issue.confidential ? ' · confidential' : ''}
      </p>
      <div class="issue-layout">
        <div class="issue-main">
          <section aria-labelledby="description">
            <h2 id="description" class="visually-hidden">
              Description
            </h2>
            {issue.description ? <Markdown text={issue.description} project={page.project.path} /> : <p class="meta">No description.</p>}
          </section>
          <IssueTimeline view={view} />
        </div>
        <aside class="issue-side" aria-label="Issue details">
          <IssueState view={view} />
          <IssueFields view={view} />
          <IssueMilestones view={view} />
          <IssueFollowers view={view} />
          <IssueReferrers view={view} />
          <IssueFixes view={view} />
        </aside>
      </div>
    </ProjectLayout>
  );
}

/** What the parts of an issue page share. */
interface IssueView {
  page: ProjectPageContext;
  issue: Awaited<ReturnType<typeof issueByNumber>>['issue'];
  activity: Awaited<ReturnType<typeof issueActivity>>;
  /** The caller may change the issue's state. */
  canManage: boolean;
  /** The open milestones the caller may schedule the issue in, or null when they may not. */
  schedulable: Awaited<ReturnType<typeof queryMilestones>> | null;
  /** The issue page's path. */
  base: string;
  /** A user's name by id (`system` for null). */
  name: (id: number | null) => string;
  /** A user's avatar by id (none for null). */
  avatarOf: (id: number | null) => VNode | null;
}

/** The comments and state changes in date order, and the comment form. */
function IssueTimeline({ view }: { view: IssueView }) {
  const { page, activity, name, avatarOf, base } = view;
  const timeline = [
    ...activity.comments.map((c) => ({
      date: c.date,
      key: `c${c.id}`,
      node: (
        <article class="comment" aria-label={`Comment by ${name(c.userId)}`}>
          <p class="meta">
            {avatarOf(c.userId)}
            <strong>{name(c.userId)}</strong>
            {' commented '}
            {when(c.date)}
          </p>
          <Markdown text={c.content} project={page.project.path} />
        </article>
      ),
    })),
    ...activity.stateChanges.map((s, i) => ({
      date: s.date,
      key: `s${i}`,
      node: (
        <p class="meta change">
          {avatarOf(s.userId)}
          {`${name(s.userId)} changed the state from ${s.oldState} to ${s.newState}`}
          {s.reason ? ` (${s.reason})` : ''} {when(s.date)}
        </p>
      ),
    })),
  ].sort((a, b) => a.date - b.date);
  return (
    <section aria-labelledby="activity">
      <h2 id="activity">Activity</h2>
      {timeline.length === 0 && <p class="meta">No comment yet.</p>}
      {timeline.map((entry) => (
        <div key={entry.key}>{entry.node}</div>
      ))}
      {page.user && (
        <MarkdownForm page={page} action={`${base}/comments`} project={page.project.path} name="content" label="Comment" submit="Add comment" required />
      )}
    </section>
  );
}

/** The state, and the transitions the caller may make. */
function IssueState({ view }: { view: IssueView }) {
  const { page, issue, base } = view;
  return (
    <>
      <h2>State</h2>
      <p>{issue.state}</p>
      {view.canManage &&
        ISSUE_STATES.filter((s) => s !== issue.state).map((state) => (
          <InlineForm page={page} action={`${base}/state`} label={`Move to ${state}`} key={state} fields={{ state }}>
            {TRANSITION_LABELS[state] ?? `Move to ${state}`}
          </InlineForm>
        ))}
    </>
  );
}

/** The issue's field values. */
function IssueFields({ view }: { view: IssueView }) {
  const fieldValues = (fieldName: string) => view.activity.fields.filter((f) => f.name === fieldName && f.value !== null).map((f) => f.value as string);
  return (
    <>
      <h2>Fields</h2>
      <dl class="fields">
        {ISSUE_FIELDS.map((spec) => {
          const values = fieldValues(spec.name);
          return [<dt key={`t${spec.name}`}>{spec.name}</dt>, <dd key={`d${spec.name}`}>{values.length ? values.join(', ') : '—'}</dd>];
        })}
      </dl>
    </>
  );
}

/** The milestones the issue is scheduled in, and the scheduling form. */
function IssueMilestones({ view }: { view: IssueView }) {
  const { page, activity, schedulable, base } = view;
  return (
    <>
      <h2>Milestones</h2>
      {activity.milestones.length === 0 ? (
        <p class="meta">None</p>
      ) : (
        <ul>
          {activity.milestones.map((m) => (
            <li key={m.id}>{m.name}</li>
          ))}
        </ul>
      )}
      {schedulable && (
        <PostForm page={page} action={`${base}/milestones`} label="Schedule">
          <label for="field-milestone">Milestone</label>{' '}
          <select id="field-milestone" name="milestone">
            <option value="">None</option>
            {[...activity.milestones.filter((m) => !schedulable.some((s) => s.id === m.id)), ...schedulable].map((m) => (
              <option key={m.id} value={String(m.id)} selected={activity.milestones.some((a) => a.id === m.id)}>
                {m.name}
              </option>
            ))}
          </select>{' '}
          <button type="submit">Schedule</button>
        </PostForm>
      )}
    </>
  );
}

/** Watchers and votes, with the caller's watch and vote toggles. */
function IssueFollowers({ view }: { view: IssueView }) {
  const { page, issue, activity, name, base } = view;
  const me = page.user?.id;
  const watching = activity.watches.some((w) => w.userId === me && w.watching);
  const voted = activity.votes.some((v) => v.userId === me);
  const watchers = activity.watches.filter((w) => w.watching);
  return (
    <>
      <h2>Watchers</h2>
      <p>{watchers.length === 0 ? 'Nobody' : watchers.map((w) => name(w.userId)).join(', ')}</p>
      {page.user && (
        <InlineForm page={page} action={`${base}/watch`} label="Watch" fields={{ watching: watching ? 'false' : 'true' }}>
          {watching ? 'Unwatch' : 'Watch'}
        </InlineForm>
      )}
      <h2>Votes</h2>
      <p>
        {`${issue.voteCount} ${issue.voteCount === 1 ? 'vote' : 'votes'}`}
        {activity.votes.length > 0 ? ` (${activity.votes.map((v) => name(v.userId)).join(', ')})` : ''}
      </p>
      {page.user && (
        <InlineForm page={page} action={`${base}/vote`} label="Vote" fields={{ vote: voted ? 'false' : 'true' }}>
          {voted ? 'Unvote' : 'Vote'}
        </InlineForm>
      )}
    </>
  );
}

/** What references the issue: issues, pull requests, commits and code comments. */
function IssueReferrers({ view }: { view: IssueView }) {
  const { referrers } = view.activity;
  return (
    <>
      <h2>Referenced from</h2>
      {referrers.length === 0 ? (
        <p class="meta">Nothing</p>
      ) : (
        <ul class="referrers">
          {referrers.map((r, i) => (
            <li key={i}>
              {r.kind === 'issue' && <a href={`/${r.projectPath}/~issues/${r.number}`}>{`issue ${r.projectPath}#${r.number}`}</a>}
              {r.kind === 'pullRequest' && <a href={`/${r.projectPath}/~pulls/${r.number}`}>{`pull request ${r.projectPath}#${r.number}`}</a>}
              {r.kind === 'commit' && (
                <>
                  {`commit ${r.projectPath}:`}
                  <code>{(r.key ?? '').slice(0, 10)}</code>
                </>
              )}
              {r.kind === 'codeComment' && `code comment ${r.key} in ${r.projectPath}`}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The commits and pull requests fixing the issue (for callers who read code). */
function IssueFixes({ view }: { view: IssueView }) {
  const { fixingCommits, fixingPulls } = view.activity;
  return (
    <>
      {fixingCommits !== null && (
        <>
          <h2>Fixing commits</h2>
          {fixingCommits.length === 0 ? (
            <p class="meta">None</p>
          ) : (
            <ul class="fixing-commits">
              {fixingCommits.map((c) => (
                <li key={c.commitHash}>
                  <code title={c.commitHash}>{c.commitHash.slice(0, 10)}</code>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      {fixingPulls !== null && (
        <>
          <h2>Fixing pull requests</h2>
          {fixingPulls.length === 0 ? (
            <p class="meta">None</p>
          ) : (
            <ul>
              {fixingPulls.map((p) => (
                <li key={p.row.id}>
                  <a href={`/${p.projectPath}/~pulls/${p.row.number}`}>{`#${p.row.number} ${p.row.title}`}</a>
                  {` (${p.row.status})`}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </>
  );
}

/** A change an issue page's form posts: the issue of the path, then back to its page. */
function issueAction(path: string, act: (page: ProjectPageContext, issueId: number) => Promise<unknown>): ProjectPageRoute {
  return {
    method: 'POST',
    path: `/~issues/:number/${path}`,
    access: 'user',
    handler: async (page) => {
      const { issue } = await issueByNumber(page.ctx, page.project.id, Number(page.params.number));
      await act(page, issue.id);
      return redirect(`/${page.project.path}/~issues/${issue.number}`);
    },
  };
}

/** The issue page and its actions: comment, change state, set the milestone, watch, vote. */
export const issueDetailRoutes: ProjectPageRoute[] = [
  { method: 'GET', path: '/~issues/:number', handler: issuePage },
  issueAction('comments', (page, issueId) => createIssueComment(page.ctx, { issueId, content: page.form.content ?? '' })),
  issueAction('state', (page, issueId) => transitIssueState(page.ctx, issueId, { state: page.form.state ?? '' })),
  issueAction('milestones', async (page, issueId) => {
    const milestone = page.form.milestone ?? '';
    if (milestone !== '' && !/^\d+$/.test(milestone)) throw new BadRequest(`Invalid milestone id: ${milestone}`);
    await setIssueMilestones(page.ctx, issueId, milestone === '' ? [] : [Number(milestone)]);
  }),
  issueAction('watch', async (page, issueId) => {
    const watching = page.form.watching === 'true';
    const own = (await listIssueWatches(page.ctx, issueId)).find((w) => w.userId === page.user!.id);
    if (own) await updateIssueWatch(page.ctx, own.id, { watching });
    else await createIssueWatch(page.ctx, { issueId, watching });
  }),
  issueAction('vote', async (page, issueId) => {
    const own = (await listIssueVotes(page.ctx, issueId)).find((v) => v.userId === page.user!.id);
    if (page.form.vote === 'true' && !own) await createIssueVote(page.ctx, { issueId });
    if (page.form.vote === 'false' && own) await deleteIssueVote(page.ctx, own.id);
  }),
];
