/**
 * Database and repositories compared (docs/backup.md "Consistency"): every branch and tag git has
 * must be the one the ref-change journal last recorded, every pull request's `refs/pulls/N/head`
 * its latest update, and every open pull request's latest update the head of its source branch
 * once the journal worker has caught up. {@link findInconsistencies} only reads; `gitloom admin
 * check` runs it on a live server through {@link checkConsistency}, and `gitloom restore` repairs
 * what it finds in a restored copy with {@link reconcile}.
 */
import { readdir, rm } from 'node:fs/promises';
import type { Db } from '../db/database.js';
import type { RefJournalRow } from '../db/schema.js';
import { initBareRepository, listRefs, mergeBase, updateRefs, ZERO_HASH } from '../git/repository.js';
import type { Context } from './context.js';
import { existingJournalIds, journaledRefHeads, journalPush, refsWithIntents, unprocessedJournalRefs } from './journal/index.js';
import { allProjectIds } from './projects/index.js';
import { latestUpdate, pullRefs, pullRequestsWithLatestUpdate } from './pulls/index.js';

/**
 * What can disagree:
 * - `repository-missing`: a project of the database has no repository;
 * - `repository-orphaned`: a repository belongs to no project of the database;
 * - `ref-unknown`: a branch or tag of git is not where the journal last put it (a push the
 *   database does not know);
 * - `pull-request-ref`: `refs/pulls/N/head` is not the pull request's latest update;
 * - `pull-request-behind`: an open pull request's latest update is not its source branch's head
 *   although no journal entry of that branch is pending.
 */
export type FindingKind = 'repository-missing' | 'repository-orphaned' | 'ref-unknown' | 'pull-request-ref' | 'pull-request-behind';

/** One disagreement between the database and git. */
export interface Finding {
  kind: FindingKind;
  projectId: number;
  /** The full ref name, for the ref kinds. */
  ref: string | null;
  /** The pull request's id, for the pull request kinds. */
  requestId: number | null;
  /** The commit the database knows (null: none, or the ref does not exist for it). */
  database: string | null;
  /** The commit git has (null: the ref does not exist). */
  git: string | null;
  /** For `ref-unknown`: who made the change, when the backup's journal says (else null). */
  userId: number | null;
  /** One line for people. */
  message: string;
}

/** A journal row as a backup records those written while it ran (docs/backup.md "Archive format"). */
export type JournalEntry = Pick<RefJournalRow, 'id' | 'projectId' | 'ref' | 'oldHash' | 'newHash' | 'userId'>;

const short = (hash: string | null) => (hash === null ? 'nothing' : hash.slice(0, 12));
const REPO_NAME = /^(\d+)\.git$/;

/** Project ids of the repositories under `reposDir` (`<id>.git`). */
async function repositoryIds(reposDir: string): Promise<Set<number>> {
  const names = await readdir(reposDir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  return new Set(
    names.flatMap((n) => {
      const match = REPO_NAME.exec(n);
      return match ? [Number(match[1])] : [];
    }),
  );
}

/**
 * Compares the database with the repositories, changing nothing. A branch or tag the journal has
 * no entry for predates the journal (or was copied into a fork) and counts as known — unless
 * `afterSnapshot` (the journal entries a backup saw written while it ran) changed it: then the
 * database knew the entry's old value.
 *
 * @param repoPath a project's repository path (Context.repoPath).
 * @param reposDir the directory holding the repositories (`<data dir>/repos`).
 * @returns the findings, by project.
 * @throws GitError when a repository cannot be read.
 */
export async function findInconsistencies(
  db: Db,
  repoPath: (projectId: number) => string,
  reposDir: string,
  afterSnapshot: readonly JournalEntry[] = [],
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const finding = (f: Omit<Finding, 'userId'> & { userId?: number | null }) => findings.push({ ...f, userId: f.userId ?? null });
  const projects = await allProjectIds(db);
  const repos = await repositoryIds(reposDir);
  for (const id of [...repos].filter((r) => !projects.includes(r)).sort((a, b) => a - b)) {
    finding({
      kind: 'repository-orphaned',
      projectId: id,
      ref: null,
      requestId: null,
      database: null,
      git: null,
      message: `repository ${id}.git belongs to no project`,
    });
  }
  const known = await existingJournalIds(
    db,
    afterSnapshot.map((e) => e.id),
  );
  const missed = afterSnapshot.filter((e) => !known.has(e.id)).sort((a, b) => a.id - b.id);
  const refsOf = new Map<number, Map<string, string>>();
  for (const projectId of projects) {
    if (!repos.has(projectId)) {
      finding({
        kind: 'repository-missing',
        projectId,
        ref: null,
        requestId: null,
        database: null,
        git: null,
        message: `project ${projectId} has no repository`,
      });
      continue;
    }
    const refs = await listRefs(repoPath(projectId));
    refsOf.set(projectId, refs);
    const recorded = await journaledRefHeads(db, projectId);
    const intents = await refsWithIntents(db, projectId);
    const mine = missed.filter((e) => e.projectId === projectId);
    const names = new Set([...refs.keys(), ...recorded.keys(), ...mine.map((e) => e.ref)]);
    for (const ref of [...names].sort()) {
      if (!/^refs\/(heads|tags)\//.test(ref) || intents.has(ref)) continue; // an intent is start-up recovery's (ref-journal.ts)
      const git = refs.get(ref) ?? null;
      const first = mine.find((e) => e.ref === ref);
      const database = recorded.has(ref) ? recorded.get(ref)! : first ? first.oldHash : git;
      if (database === git) continue;
      const by = [...mine].reverse().find((e) => e.ref === ref && e.newHash === git);
      finding({
        kind: 'ref-unknown',
        projectId,
        ref,
        requestId: null,
        database,
        git,
        userId: by?.userId ?? null,
        message: `project ${projectId} ${ref}: the database knows ${short(database)}, git has ${short(git)}`,
      });
    }
  }
  findings.push(...(await pullRequestFindings(db, repoPath, refsOf, new Set(findings.map((f) => `${f.projectId} ${f.ref}`)))));
  return findings;
}

async function pullRequestFindings(
  db: Db,
  repoPath: (projectId: number) => string,
  refsOf: Map<number, Map<string, string>>,
  unknownRefs: Set<string>,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const requests = await pullRequestsWithLatestUpdate(db);
  const pending = new Set((await unprocessedJournalRefs(db)).map((r) => `${r.projectId} ${r.ref}`));
  for (const pr of requests) {
    const target = refsOf.get(pr.targetProjectId);
    if (!target) continue;
    const headRef = pullRefs.head(pr.number);
    const git = target.get(headRef) ?? null;
    if (git !== pr.headCommitHash) {
      findings.push({
        kind: 'pull-request-ref',
        projectId: pr.targetProjectId,
        ref: headRef,
        requestId: pr.id,
        database: pr.headCommitHash,
        git,
        userId: null,
        message: `pull request #${pr.number} of project ${pr.targetProjectId}: ${headRef} is ${short(git)}, its latest update ${short(pr.headCommitHash)}`,
      });
    }
    if (pr.status !== 'OPEN' || pr.checkError !== null || pr.sourceProjectId === null) continue;
    const sourceRef = `refs/heads/${pr.sourceBranch}`;
    const key = `${pr.sourceProjectId} ${sourceRef}`;
    const source = refsOf.get(pr.sourceProjectId);
    if (!source || pending.has(key) || unknownRefs.has(key)) continue;
    const head = source.get(sourceRef) ?? null;
    if (head === pr.headCommitHash) continue;
    // unrelated histories get no update (docs/compatibility.md#pull-requests-background-check)
    const targetHead = target.get(`refs/heads/${pr.targetBranch}`);
    if (head !== null && targetHead && pr.sourceProjectId === pr.targetProjectId && (await mergeBase(repoPath(pr.targetProjectId), targetHead, head)) === null)
      continue;
    findings.push({
      kind: 'pull-request-behind',
      projectId: pr.targetProjectId,
      ref: sourceRef,
      requestId: pr.id,
      database: pr.headCommitHash,
      git: head,
      userId: null,
      message: `pull request #${pr.number} of project ${pr.targetProjectId}: its latest update is ${short(pr.headCommitHash)}, its source branch ${short(head)}`,
    });
  }
  return findings;
}

const keyOf = (f: Finding) => `${f.kind} ${f.projectId} ${f.ref} ${f.requestId} ${f.database} ${f.git}`;

/**
 * {@link findInconsistencies} on a live server: a change under way (a push whose ref moved but
 * whose post-receive report is not written yet, a journal entry being processed) looks like a
 * finding for a moment, so the comparison is made twice, `pauseMs` apart, and only what both
 * passes found is returned.
 */
export async function checkConsistency(db: Db, repoPath: (projectId: number) => string, reposDir: string, pauseMs = 2000): Promise<Finding[]> {
  const first = await findInconsistencies(db, repoPath, reposDir);
  if (first.length === 0) return first;
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  const seen = new Set(first.map(keyOf));
  return (await findInconsistencies(db, repoPath, reposDir)).filter((f) => seen.has(keyOf(f)));
}

/**
 * Repairs the findings of a restored copy (docs/backup.md "Restore"), no server running on it:
 * - `ref-unknown`: the change is written to the journal (old: what the database knew, new: what
 *   git has), so the journal worker reacts to it when the server starts — pull requests updated
 *   or merged, builds triggered, CODE_PUSH sent — as it would to the push;
 * - `pull-request-ref`: `refs/pulls/N/head` and `refs/updates/<id>` are set to the latest update;
 * - `repository-missing`: an empty repository is created;
 * - `repository-orphaned`: the repository (of a project created after the database was copied)
 *   is removed;
 * - `pull-request-behind` is left as found (nothing in git or the journal explains it).
 *
 * @returns one line per repair.
 * @throws GitError when a repository cannot be written.
 */
export async function reconcile(ctx: Context, findings: readonly Finding[]): Promise<string[]> {
  const done: string[] = [];
  for (const f of findings) {
    const repo = ctx.repoPath(f.projectId);
    if (f.kind === 'ref-unknown') {
      await journalPush(ctx, f.projectId, f.userId, [{ ref: f.ref!, oldHash: f.database ?? ZERO_HASH, newHash: f.git ?? ZERO_HASH }]);
      done.push(`${f.message}: journaled, the server reacts to it when it starts`);
    } else if (f.kind === 'pull-request-ref') {
      const update = await latestUpdate(ctx.db, f.requestId!);
      await updateRefs(repo, [
        { ref: f.ref!, newHash: f.database },
        { ref: pullRefs.update(update.id), newHash: f.database },
      ]);
      done.push(`${f.message}: set to the latest update`);
    } else if (f.kind === 'repository-missing') {
      await initBareRepository(repo);
      done.push(`${f.message}: an empty one was created`);
    } else if (f.kind === 'repository-orphaned') {
      await rm(repo, { recursive: true, force: true });
      done.push(`${f.message}: removed (its project was created after the database was copied)`);
    }
  }
  return done;
}
