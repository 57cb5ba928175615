import { agentOfBuild, agentsRunningBuilds } from './agents/index.js';
import {
  agentOfBuildReference,
  agentsRunningBuildsCondition,
  buildByReference as findBuildByReference,
  buildCommitOf,
  buildStatusCondition as pullRequestBuildStatus,
  currentBuildRows,
  deletePullRequestBuilds,
  fixedIssueIds,
  forgetAgents,
  onBuildFinished,
  onBuildsProjectsDeleting,
  reassignBuildUsers,
  triggerOnPullRequest,
  triggerOnPullRequestClosed,
  triggerOnRefsUpdated,
} from './builds/index.js';
import { createContext, systemActor, type Services } from './context.js';
import {
  buildStatusCondition,
  checkPullRequest,
  currentBuildsOf,
  fixedIssueIdsOfPullRequestReference,
  listIssuePullRequests,
  onJournaledMergeApplied,
  onProjectsDeleting,
  onRefsUpdated,
  pullRequestNumbers as numbersOfPullRequests,
  reassignPullRequestAuthors,
  recordPullRequestReferences as recordReferencesOnPullRequests,
} from './pulls/index.js';
import {
  buildByReference,
  codeCommentProjects,
  countIssuesScheduledOn,
  issuesFixedInBuild,
  issuesFixedInPullRequest,
  onFixingCommitsPushed,
  pullRequestNumbers,
  pullRequestsFixingIssue,
  reassignIssueAuthors,
  recordPullRequestReferences,
} from './issues/index.js';
import { forgetThread } from './notifications/index.js';
import { hasPullMirror, issuesScheduledOn, projectsReferencing, recordRefsUpdated, renameReferences, roleUsages } from './projects/index.js';
import { markPushMirrorsPending, projectHasPullMirror } from './mirrors/index.js';
import { buildCommit, markMaintenanceDue, onArchivesProjectsDeleting } from './repositories/index.js';
import { endUserSessions } from './auth/index.js';
import { codeCommentProjects as projectsOfCodeComments, reassignCodeCommentAuthors } from './code-comments/index.js';
import { enqueueEvent } from './outbox/index.js';
import { onLfsProjectsDeleting } from './lfs/index.js';
import { markCodeIndexStale } from './code-search/index.js';
import { renameSsoGroupReferences, ssoGroupUsages } from './sso/index.js';

/**
 * The one place where areas subscribe to each other's events (docs/architecture.md), so that no
 * publisher knows its reactions. Handlers act as the system user.
 *
 * - An entry of the ref-change journal (awaited, in this order): open requests whose branches
 *   moved are checked (docs/compatibility.md#pull-requests-background-check), the project's last
 *   activity and commit dates recorded, fixing commits close issues, and the pushed branches and
 *   tags trigger their jobs (docs/compatibility.md#builds-triggers), and the project's push mirrors
 *   have something to push (docs/compatibility.md#repository-mirrors), and its code index is
 *   stale (docs/compatibility.md#code-search).
 * - A request opened or changed is checked; a checked request evaluates its pull request
 *   triggers — once per check, whatever caused it; a merged or discarded one its close triggers.
 * - A finished build wakes the schedulers and runs its dependency-finished triggers and post-build
 *   actions (awaited by the finishing call).
 * - And the transaction reactions of {@link registerTransactionHandlers}; the answers lower
 *   areas ask of higher ones are provided ({@link provideAnswers}).
 */
export function registerEventHandlers(services: Services): void {
  const ctx = createContext(services, systemActor);
  const { events } = services;
  events.on('refsJournalEntry', (entry) => onRefsUpdated(ctx, entry.projectId, entry.changes));
  events.on('refsJournalEntry', (entry) => recordRefsUpdated(ctx, entry.projectId, entry.changes));
  events.on('refsJournalEntry', (entry) => onFixingCommitsPushed(ctx, entry.projectId, entry.changes, entry.userId));
  events.on('refsJournalEntry', (entry) => triggerOnRefsUpdated(ctx, entry.projectId, entry.changes, `ref-journal:${entry.journalId}`));
  events.on('refsJournalEntry', (entry) => markPushMirrorsPending(ctx, entry.projectId));
  events.on('refsJournalEntry', (entry) => markCodeIndexStale(ctx.db, entry.projectId, ctx.now()));
  events.on('refsJournalEntry', (entry) => markMaintenanceDue(ctx.db, entry.projectId, ctx.now(), ctx.config.maintenanceDelayMs));
  events.on('pullRequestChanged', (event) => checkPullRequest(ctx, event.requestId));
  events.on('pullRequestChecked', (event) => triggerOnPullRequest(ctx, event.requestId));
  events.on('pullRequestClosed', (event) => triggerOnPullRequestClosed(ctx, event.requestId));
  events.on('buildFinished', (event) => onBuildFinished(ctx, event.buildId));

  registerTransactionHandlers(services);
  provideAnswers();
}

/** Fills the questions lower areas ask of higher ones (src/domain/providers.ts). */
function provideAnswers(): void {
  buildByReference.provide(findBuildByReference);
  issuesFixedInBuild.provide(fixedIssueIds);
  issuesFixedInPullRequest.provide(fixedIssueIdsOfPullRequestReference);
  pullRequestsFixingIssue.provide(listIssuePullRequests);
  currentBuildsOf.provide(currentBuildRows);
  buildStatusCondition.provide(pullRequestBuildStatus);
  recordPullRequestReferences.provide(recordReferencesOnPullRequests);
  pullRequestNumbers.provide(numbersOfPullRequests);
  codeCommentProjects.provide(projectsOfCodeComments);
  issuesScheduledOn.provide(countIssuesScheduledOn);
  buildCommit.provide(buildCommitOf);
  hasPullMirror.provide(projectHasPullMirror);
  agentsRunningBuilds.provide(agentsRunningBuildsCondition);
  agentOfBuild.provide(agentOfBuildReference);
}

/**
 * The reactions that run inside the publisher's transaction, part of every writer's consistency
 * (the server, and the command line's password reset and restore):
 *
 * - a password change ends the user's web sessions;
 * - a renamed user or group is renamed in the protections that name it (a group also in the
 *   single sign-on settings' default groups); one still named there cannot be deleted, nor a
 *   role still granted or a project's default;
 * - a deleted user's authored records go to the unknown user;
 * - an activity (a pull request opened, an issue commented, a build finished, a push, …) is
 *   written to the outbox, which tells watchers and webhooks;
 * - a deleted pull request's builds go with it; a merge the journal recovered marks its request
 *   merged; deleting projects discards the requests from them;
 * - a removed build agent is forgotten by the builds it ran.
 */
export function registerTransactionHandlers({ events, config }: Pick<Services, 'events' | 'config'>): void {
  events.onTransaction('passwordChanged', (event) => endUserSessions(event.db, event.userId, event.keepSession));
  events.onTransaction('principalRenamed', (event) => renameReferences(event.db, event.kind, event.from, event.to));
  events.onTransaction('principalDeleting', async (event) => {
    for (const path of await projectsReferencing(event.db, event.kind, event.name)) event.usages.push(`protections of project '${path}'`);
  });
  events.onTransaction('principalRenamed', async (event) => {
    if (event.kind === 'group') await renameSsoGroupReferences(event.db, event.from, event.to);
  });
  events.onTransaction('principalDeleting', async (event) => {
    if (event.kind === 'group') event.usages.push(...(await ssoGroupUsages(event.db, event.name)));
  });
  events.onTransaction('roleDeleting', async (event) => {
    event.usages.push(...(await roleUsages(event.db, event.roleId)));
  });
  events.onTransaction('activity', (event) => enqueueEvent(event.db, event.activity));
  events.onTransaction('journaledMergeApplied', (event) => onJournaledMergeApplied({ events }, event));
  events.onTransaction('projectsDeleting', (event) => onProjectsDeleting({ events }, event));
  events.onTransaction('projectsDeleting', (event) => onLfsProjectsDeleting(config, event));
  events.onTransaction('projectsDeleting', (event) => onArchivesProjectsDeleting(config, event));
  events.onTransaction('projectsDeleting', (event) => onBuildsProjectsDeleting(config, event));
  events.onTransaction('pullRequestDeleting', (event) => deletePullRequestBuilds(config, event.db, event.requestId, event.afterCommit));
  events.onTransaction('pullRequestDeleting', (event) => forgetThread(event.db, 'PullRequest', event.requestId));
  events.onTransaction('agentsDeleting', (event) => forgetAgents(event.db, event.agentIds));
  for (const reassign of [reassignPullRequestAuthors, reassignIssueAuthors, reassignCodeCommentAuthors, reassignBuildUsers]) {
    events.onTransaction('userDeleting', (event) => reassign(event.db, event.userId));
  }
}
