/**
 * Why a user is told of a thread (docs/compatibility.md#notification-inbox): the `reason` values
 * of GitHub's notifications API where one fits, and the groups a user turns on or off for the
 * inbox and for mail.
 */

/**
 * A notification's reason: `mention` (named with @ in the event's text), `review_requested`,
 * `assign` (the user was assigned the pull request, or put in a user field of the issue), `author` (the user opened the pull request or issue), `comment` (a comment on a watched
 * thread), `state_change` (a watched thread reopened, merged, discarded, closed…), `subscribed`
 * (a watched thread opened), `ci_activity` (a build of the user's pull request failed).
 */
export type NotificationReason = 'mention' | 'review_requested' | 'assign' | 'author' | 'comment' | 'state_change' | 'subscribed' | 'ci_activity';

/** The groups of reasons a user's settings choose, in the order of the settings page, with their reasons and labels. */
export const REASON_GROUPS = [
  { group: 'participating', label: 'Participating (threads you opened)', reasons: ['author'] },
  { group: 'mentions', label: 'Mentions', reasons: ['mention'] },
  { group: 'review_requests', label: 'Review requests', reasons: ['review_requested'] },
  { group: 'assignments', label: 'Assignments (pull requests and issues assigned to you)', reasons: ['assign'] },
  { group: 'watching', label: 'Watching (comments and state changes of watched threads)', reasons: ['subscribed', 'comment', 'state_change'] },
  { group: 'builds', label: 'Builds (failed builds of your pull requests)', reasons: ['ci_activity'] },
] as const satisfies readonly { group: string; label: string; reasons: readonly NotificationReason[] }[];

/** A group of reasons: `participating`, `mentions`, `review_requests`, `assignments`, `watching`, `builds`. */
export type ReasonGroup = (typeof REASON_GROUPS)[number]['group'];

const GROUP_OF = new Map<string, ReasonGroup>(REASON_GROUPS.flatMap(({ group, reasons }) => reasons.map((r) => [r, group] as const)));

/** The group a reason belongs to. */
export function reasonGroup(reason: NotificationReason): ReasonGroup {
  return GROUP_OF.get(reason)!;
}

/** The reasons of direct participation (GitHub's `participating=true`): the user opened the thread, was mentioned, asked for a review or assigned. */
export const PARTICIPATING_REASONS: readonly NotificationReason[] = ['author', 'mention', 'review_requested', 'assign'];
