/**
 * What the issues area asks of the areas above it about plain references
 * (docs/compatibility.md#fixed-issue-references "Separate mechanism", src/domain/providers.ts):
 * pull requests record the "referenced from" changes a text leaves on them, and pull requests and
 * code comments name the referencing entities an issue page shows. Filled at start-up by
 * src/domain/event-handlers.ts.
 */
import type { Db } from '../../db/database.js';
import type { PullRequestChangeData } from '../pulls/index.js';
import { Provided } from '../providers.js';
import type { NumberInProject } from './fix-references.js';

/**
 * Records `data` (a PullRequestReferencedFrom…Data) once on each pull request at `places` (by
 * target project), except request `exceptRequestId` (a request, or the request of a code comment,
 * does not reference itself); unknown places are ignored. Runs in the caller's transaction `db`.
 */
export const recordPullRequestReferences = new Provided<
  (
    db: Db,
    places: readonly NumberInProject[],
    exceptRequestId: number | null,
    userId: number | null,
    date: number,
    data: PullRequestChangeData,
  ) => Promise<void>
>('the references recorded on pull requests');

/** The pull requests with ids `ids` (those that exist): their target project and number. */
export const pullRequestNumbers = new Provided<(db: Db, ids: readonly number[]) => Promise<{ id: number; targetProjectId: number; number: number }[]>>(
  'the numbers of pull requests',
);

/** The code comments with ids `ids` (those that exist): their project. */
export const codeCommentProjects = new Provided<(db: Db, ids: readonly number[]) => Promise<{ id: number; projectId: number }[]>>(
  'the projects of code comments',
);
