/**
 * What the issues area asks of the areas above it whose work fixes issues (src/domain/providers.ts):
 * pull requests and builds, for the issue query's `fixed in pull request`, `fixed in build` and
 * `fixed between` (docs/compatibility.md#issues-query-language) and the issue page's fixing
 * requests. Filled at start-up by src/domain/event-handlers.ts.
 */
import type { PullRequestRow } from '../../db/schema.js';
import type { Context } from '../context.js';
import { Provided } from '../providers.js';

/** `proj#n` → the build it names; QuerySyntaxError when the project or build is unknown. */
export const buildByReference = new Provided<(ctx: Context, reference: string) => Promise<{ id: number; projectId: number; commit: string }>>(
  'the build a reference names',
);
/** The ids of the issues a build fixed (commits since the previous successful build of its job). */
export const issuesFixedInBuild = new Provided<(ctx: Context, buildId: number) => Promise<number[]>>('the issues a build fixed');
/** `proj#n` → the ids of the issues that pull request fixes; QuerySyntaxError when unknown. */
export const issuesFixedInPullRequest = new Provided<(ctx: Context, reference: string) => Promise<number[]>>('the issues a pull request fixes');
/** The readable pull requests fixing an issue (ReadCode on the issue's project). */
export const pullRequestsFixingIssue = new Provided<(ctx: Context, issueId: number) => Promise<PullRequestRow[]>>('the pull requests fixing an issue');
