import type { Db } from '../../db/database.js';
import { ancestorPaths, findProjectRow, storedSettingsByPath } from '../projects/index.js';

/** A saved query: a name and a query text (null = all). */
export interface NamedQuery {
  name: string;
  query: string | null;
}

/** The kinds of per-project query personalizations (docs/compatibility.md#query-personalizations). */
export type PersonalizationKind = 'issue' | 'pullRequest' | 'build' | 'commit' | 'codeComment';

const q = (name: string, query: string | null): NamedQuery => ({ name, query });

/** Global saved queries of a fresh install, by kind. */
export const GLOBAL_QUERIES: Record<PersonalizationKind, readonly NamedQuery[]> = {
  issue: [
    q('Open', '"State" is "Open"'),
    q('Assigned to me & Open', '"Assignees" is me and "State" is "Open"'),
    q('Submitted by me & Open', 'submitted by me and "State" is "Open"'),
    q('Assigned to me', '"Assignees" is me'),
    q('Submitted by me', 'submitted by me'),
    q('Mentioned me', 'mentioned me'),
    q('Submitted recently', '"Submit Date" is since "last week"'),
    q('Has activity recently', '"Last Activity Date" is since "last week"'),
    q('Open & Critical', '"State" is "Open" and "Priority" is "Critical"'),
    q('Open & Unassigned', '"State" is "Open" and "Assignees" is empty'),
    q('Closed', '"State" is "Closed"'),
    q('All', null),
  ],
  pullRequest: [
    q('Open', 'open'),
    q('To be reviewed by me', 'to be reviewed by me'),
    q('Requested for changes by me', 'requested for changes by me'),
    q('Assigned to me', 'assigned to me'),
    q('Approved by me', 'approved by me'),
    q('Submitted by me', 'submitted by me'),
    q('Mentioned me', 'mentioned me'),
    q('Submitted recently', '"Submit Date" is since "last week"'),
    q('Has activity recently', '"Last Activity Date" is since "last week"'),
    q('Merged', 'merged'),
    q('Discarded', 'discarded'),
    q('All', null),
  ],
  build: [
    q('All', null),
    q('Successful', 'successful'),
    q('Failed', 'failed'),
    q('Cancelled', 'cancelled'),
    q('Timed out', 'timed out'),
    q('Running', 'running'),
    q('Waiting', 'waiting'),
    q('Pending', 'pending'),
    q('Build recently', '"Submit Date" is since "last week"'),
  ],
  commit: [
    q('All', null),
    q('Default branch', 'default-branch'),
    q('Authored by me', 'authored-by-me'),
    q('Committed by me', 'committed-by-me'),
    q('Committed recently', 'after(last week)'),
  ],
  codeComment: [
    q('Unresolved', 'unresolved'),
    q('Created by me', 'created by me'),
    q('Mentioned me', 'mentioned me'),
    q('Created recently', '"Create Date" is since "last week"'),
    q('Has activity recently', '"Last Activity Date" is since "last week"'),
    q('Resolved', 'resolved'),
    q('All', null),
  ],
};

function storedList(setting: Record<string, any>, kind: PersonalizationKind): unknown {
  switch (kind) {
    case 'issue':
      return setting.issueSetting?.namedQueries;
    case 'pullRequest':
      return setting.pullRequestSetting?.namedQueries;
    case 'build':
      return setting.buildSetting?.namedQueries;
    case 'commit':
      return setting.namedCommitQueries;
    case 'codeComment':
      return setting.namedCodeCommentQueries;
  }
}

/**
 * The names of the common (`g:`) queries a personalization's watch keys may refer to
 * (docs/compatibility.md#query-personalizations "Keys"): for issues, pull requests and builds the first list
 * set walking project → parent → …, else the global list; for commits and code comments the
 * project's own list, else the built-in defaults.
 */
export async function commonQueryNames(db: Db, projectId: number, kind: PersonalizationKind): Promise<string[]> {
  const project = await findProjectRow(db, projectId);
  if (!project) return [];
  const chain = kind === 'commit' || kind === 'codeComment' ? [project.path] : ancestorPaths(project.path).reverse();
  const stored = await storedSettingsByPath(db, chain);
  for (const path of chain) {
    const text = stored.get(path);
    if (!text) continue;
    let setting: Record<string, unknown>;
    try {
      setting = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue;
    }
    const list = storedList(setting, kind);
    if (Array.isArray(list)) return list.map((item) => (item as NamedQuery)?.name).filter((n): n is string => typeof n === 'string');
  }
  return GLOBAL_QUERIES[kind].map((item) => item.name);
}
