import { triggerOnPullRequest, triggerOnPullRequestClosed } from './builds/build-events.js';
import { createContext, systemActor, type Services } from './context.js';
import { checkPullRequest } from './pulls/check.js';

/**
 * Wires background reactions to in-process domain events: opened or changed requests get
 * re-checked and their merge preview computed (docs/compatibility.md#pull-requests-background-check), and their build triggers
 * evaluated (docs/compatibility.md#builds-triggers). Reactions to ref changes are the journal worker's
 * (src/domain/journal/journal-worker.ts). Handlers act as the system user.
 */
export function registerEventHandlers(services: Services): void {
  const ctx = createContext(services, systemActor);
  services.events.on('pullRequestChanged', (event) => checkPullRequest(ctx, event.requestId));
  services.events.on('pullRequestChanged', (event) => triggerOnPullRequest(ctx, event.requestId));
  services.events.on('pullRequestClosed', (event) => triggerOnPullRequestClosed(ctx, event.requestId));
}
