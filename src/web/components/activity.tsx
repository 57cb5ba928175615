/**
 * A list of recent work — pull requests, issues and builds — newest first, each with its
 * project, its last activity and the avatar and name of who did it (the dashboard's "Recent
 * activity", a profile's activity). The rows come from the query functions, which keep only what
 * the visitor may read; this adds their paths, names and avatars in three queries whatever the
 * number of rows and lists.
 */
import { projectPaths, userNames } from '../../domain/pulls/index.js';
import { avatarVersions } from '../../domain/users/index.js';
import type { PageContext } from '../page.js';
import { Avatar } from './avatar.js';

/** What a listed pull request must carry. */
interface PullLike {
  id: number;
  number: number;
  title: string;
  targetProjectId: number;
  status: string;
  lastActivityDate: number;
  lastActivityDescription: string;
  lastActivityUserId: number | null;
  submitterId: number;
}

/** What a listed issue must carry. */
interface IssueLike {
  id: number;
  number: number;
  title: string;
  projectId: number;
  state: string;
  lastActivityDate: number;
  lastActivityDescription: string;
  lastActivityUserId: number | null;
  submitterId: number;
}

/** What a listed build must carry. */
interface BuildLike {
  id: number;
  number: number;
  projectId: number;
  jobName: string;
  status: string;
  submitDate: number;
  submitterId: number;
}

/** One row of an activity list. */
export interface ActivityItem {
  key: string;
  /** Epoch ms of the activity. */
  date: number;
  href: string;
  /** `Pull request`, `Issue` or `Build`. */
  kind: string;
  /** `path#number title` (a build: `path#number job`). */
  label: string;
  /** The state and what happened last (`Open · commented`). */
  detail: string;
  userId: number;
  userName: string;
  avatarVersion: number;
}

/** The rows of one activity list. */
export interface ActivityRows {
  pulls?: readonly PullLike[];
  issues?: readonly IssueLike[];
  builds?: readonly BuildLike[];
}

/**
 * The items of several activity lists (`lists`: rows by list name), each newest first and at
 * most `limit` long: a request or an issue dated by its last activity and shown with whoever did
 * it (its submitter when unknown), a build by its submission and submitter. The paths, names and
 * avatar versions of all lists are read together: three queries in all.
 */
export async function activityLists<K extends string>(page: PageContext, lists: Record<K, ActivityRows>, limit: number): Promise<Record<K, ActivityItem[]>> {
  const all = Object.values<ActivityRows>(lists);
  const pulls = all.flatMap((rows) => rows.pulls ?? []);
  const issues = all.flatMap((rows) => rows.issues ?? []);
  const builds = all.flatMap((rows) => rows.builds ?? []);
  const actor = (row: { lastActivityUserId: number | null; submitterId: number }) => row.lastActivityUserId ?? row.submitterId;
  const userIds = [...pulls.map(actor), ...issues.map(actor), ...builds.map((b) => b.submitterId)];
  const [paths, names, versions] = await Promise.all([
    projectPaths(page.ctx, [...pulls.map((p) => p.targetProjectId), ...issues.map((i) => i.projectId), ...builds.map((b) => b.projectId)]),
    userNames(page.ctx, userIds),
    avatarVersions(page.ctx.db, userIds),
  ]);
  const who = (userId: number) => ({ userId, userName: names.get(userId) ?? 'unknown', avatarVersion: versions.get(userId) ?? 0 });
  const path = (projectId: number) => paths.get(projectId) ?? '';
  const sentence = (text: string) => text.charAt(0) + text.slice(1).toLowerCase();
  const itemsOf = (rows: ActivityRows): ActivityItem[] => [
    ...(rows.pulls ?? []).map((p) => ({
      key: `pull-${p.id}`,
      date: p.lastActivityDate,
      href: `/${path(p.targetProjectId)}/~pulls/${p.number}`,
      kind: 'Pull request',
      label: `${path(p.targetProjectId)}#${p.number} ${p.title}`,
      detail: `${sentence(p.status)} · ${p.lastActivityDescription}`,
      ...who(actor(p)),
    })),
    ...(rows.issues ?? []).map((i) => ({
      key: `issue-${i.id}`,
      date: i.lastActivityDate,
      href: `/${path(i.projectId)}/~issues/${i.number}`,
      kind: 'Issue',
      label: `${path(i.projectId)}#${i.number} ${i.title}`,
      detail: `${i.state} · ${i.lastActivityDescription}`,
      ...who(actor(i)),
    })),
    ...(rows.builds ?? []).map((b) => ({
      key: `build-${b.id}`,
      date: b.submitDate,
      href: `/${path(b.projectId)}/~builds/${b.number}`,
      kind: 'Build',
      label: `${path(b.projectId)}#${b.number} ${b.jobName}`,
      detail: `${sentence(b.status)} · submitted`,
      ...who(b.submitterId),
    })),
  ];
  const result = {} as Record<K, ActivityItem[]>;
  for (const name of Object.keys(lists) as K[]) {
    result[name] = itemsOf(lists[name])
      .sort((a, b) => b.date - a.date || a.key.localeCompare(b.key))
      .slice(0, limit);
  }
  return result;
}

/** An activity list, or `empty` when it has no item. */
export function ActivityList({ items, empty }: { items: ActivityItem[]; empty: string }) {
  if (items.length === 0) return <p class="empty">{empty}</p>;
  return (
    <ul class="list activity">
      {items.map((item) => {
        const iso = new Date(item.date).toISOString();
        return (
          <li key={item.key}>
            <span class="activity-kind">{item.kind}</span> <a href={item.href}>{item.label}</a>
            <span class="meta">
              {' '}
              <Avatar userId={item.userId} version={item.avatarVersion} size={16} />{' '}
              {item.userId > 0 ? <a href={`/~users/${item.userId}`}>{item.userName}</a> : item.userName}
              {` · ${item.detail} · `}
              <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/** A titled section of an {@link ActivityList} (`id` names its heading for `aria-labelledby`). */
export function ActivitySection({ id, title, items, empty }: { id: string; title: string; items: ActivityItem[]; empty: string }) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <ActivityList items={items} empty={empty} />
    </section>
  );
}
