import { triggerOnPullRequest, triggerOnPullRequestClosed, triggerOnRefsUpdated } from './builds/build-events.js';
import { systemActor } from './context.js';
import { onFixingCommitsPushed } from './issues/fixed-issues.js';
import { recordRefsUpdated } from './projects/projects.js';
import { checkPullRequest, onRefsUpdated } from './pulls/check.js';
import { createContext, type Services } from '../services.js';

/**
 * Wires background reactions to domain events: pushes and merges re-check open pull requests
 * (reference/pulls.md §3.5); opened or changed requests get their merge preview computed.
 * Handlers act as the system user.
 */
export function registerEventHandlers(services: Services): void {
  const ctx = createContext(services, systemActor);
  services.events.on('refsUpdated', (event) => onRefsUpdated(ctx, event.projectId, event.changes));
  services.events.on('pullRequestChanged', (event) => checkPullRequest(ctx, event.requestId));
  services.events.on('refsUpdated', (event) => recordRefsUpdated(ctx, event.projectId, event.changes));
  services.events.on('refsUpdated', (event) => onFixingCommitsPushed(ctx, event.projectId, event.changes, event.userId));
  services.events.on('refsUpdated', (event) => triggerOnRefsUpdated(ctx, event.projectId, event.changes));
  services.events.on('pullRequestChanged', (event) => triggerOnPullRequest(ctx, event.requestId));
  services.events.on('pullRequestClosed', (event) => triggerOnPullRequestClosed(ctx, event.requestId));
}
