/**
 * The merge box of `/<project>/~pulls/<number>` (docs/compatibility.md#gitloom-differs-web-ui): the merge strategy, the preview's
 * state and conflicts (with a link to resolve them, conflicts.tsx), the reviews and required builds with their status, the merge button —
 * disabled with the reason the merge operation would give — and discard / reopen / delete or
 * restore the source branch, each a form posting to the action the API route calls.
 */
import { defaultMergeMessage, type MergeBoxView, type MergeStrategy, type PullRequestRow } from '../../../domain/pulls/index.js';
import { PostForm } from '../../components/forms.js';
import type { ProjectPageContext } from '../../page.js';
import { pullActionUrl } from './shared.js';
import { Select, TextArea } from '../../components/controls.js';

/** The merge strategies with their display names (docs/compatibility.md#pull-requests-merge-strategies-and-preview). */
export const STRATEGY_LABELS: Record<MergeStrategy, string> = {
  CREATE_MERGE_COMMIT: 'Create merge commit',
  CREATE_MERGE_COMMIT_IF_NECESSARY: 'Create merge commit if necessary',
  SQUASH_SOURCE_BRANCH_COMMITS: 'Squash source branch commits',
  REBASE_SOURCE_BRANCH_COMMITS: 'Rebase source branch commits',
};

const REVIEW_LABELS: Record<string, string> = {
  PENDING: 'pending',
  APPROVED: 'approved',
  REQUESTED_FOR_CHANGES: 'requested changes',
  EXCLUDED: 'excluded',
};

function PreviewState({ page, pr, box }: { page: ProjectPageContext; pr: PullRequestRow; box: MergeBoxView }) {
  const preview = box.preview;
  if (pr.status !== 'OPEN') {
    return pr.status === 'MERGED' && preview?.mergeCommitHash ? (
      <p>
        {'Merged as '}
        <code>{preview.mergeCommitHash.slice(0, 8)}</code>
      </p>
    ) : null;
  }
  if (box.updating) return <p class="status status-running">Updating the merge preview — reload in a moment.</p>;
  if (!preview) return <p class="status">Target branch no longer exists.</p>;
  if (preview.mergeCommitHash === null) {
    return (
      <div class="conflicts">
        <p class="status status-failed">There are merge conflicts</p>
        {box.conflicts.length > 0 && (
          <ul aria-label="Conflicting files">
            {box.conflicts.map((path) => (
              <li key={path}>
                <code>{path}</code>
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href={pullActionUrl(page, pr, 'conflicts')}>Resolve conflicts</a>
        </p>
      </div>
    );
  }
  return (
    <p class="status status-successful">
      {'Merge preview ready: '}
      <code>{preview.mergeCommitHash.slice(0, 8)}</code>
      {` (${STRATEGY_LABELS[preview.mergeStrategy]})`}
    </p>
  );
}

/** The reviews of the request with their verdicts, and the builds its merge requires with their status. */
function Checks({ page, box, names }: { page: ProjectPageContext; box: MergeBoxView; names: Map<number, string> }) {
  return (
    <>
      <h3>Reviews</h3>
      {box.reviews.length === 0 ? (
        <p class="empty">No reviewer.</p>
      ) : (
        <ul class="checks" aria-label="Reviews">
          {box.reviews.map((r) => (
            <li key={r.id} class={`review-${r.status.toLowerCase()}`}>{`${names.get(r.userId) ?? 'unknown'}: ${REVIEW_LABELS[r.status]}`}</li>
          ))}
        </ul>
      )}
      <h3>Required builds</h3>
      {box.requiredBuilds.length === 0 ? (
        <p class="empty">No build required.</p>
      ) : (
        <ul class="checks" aria-label="Required builds">
          {box.requiredBuilds.map((b) => (
            <li key={b.jobName}>
              {`${b.jobName}: `}
              {b.buildNumber === null ? (
                <span class="status">not run</span>
              ) : (
                <a href={`/${page.project.path}/~builds/${b.buildNumber}`} class={`status status-${b.status!.toLowerCase()}`}>
                  {b.status}
                </a>
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The merge form: the commit message where the strategy makes one, the blocker, the merge button (disabled while blocked). */
function MergeForm({ page, pr, box }: { page: ProjectPageContext; pr: PullRequestRow; box: MergeBoxView }) {
  return (
    <PostForm page={page} action={pullActionUrl(page, pr, 'merge')} label="Merge pull request">
      {(pr.mergeStrategy === 'CREATE_MERGE_COMMIT' ||
        pr.mergeStrategy === 'CREATE_MERGE_COMMIT_IF_NECESSARY' ||
        pr.mergeStrategy === 'SQUASH_SOURCE_BRANCH_COMMITS') && <TextArea name="message" label="Commit message" value={defaultMergeMessage(pr)} rows={3} />}
      {box.blocker && (
        <p id="merge-blocker" class="flash error">
          {box.blocker}
        </p>
      )}
      <p>
        <button type="submit" class="primary" disabled={box.blocker !== null} aria-describedby={box.blocker ? 'merge-blocker' : undefined}>
          Merge
        </button>
      </p>
    </PostForm>
  );
}

/** A form of one button posting to the request's `action`. */
function ButtonForm({ page, pr, action, label, button }: { page: ProjectPageContext; pr: PullRequestRow; action: string; label: string; button: string }) {
  return (
    <PostForm page={page} action={pullActionUrl(page, pr, action)} label={label}>
      <p>
        <button type="submit">{button}</button>
      </p>
    </PostForm>
  );
}

/** The merge strategy form. */
function StrategyForm({ page, pr }: { page: ProjectPageContext; pr: PullRequestRow }) {
  return (
    <PostForm page={page} action={pullActionUrl(page, pr, 'merge-strategy')} label="Merge strategy" class="inline-form">
      <Select
        name="strategy"
        label="Merge strategy"
        value={pr.mergeStrategy}
        options={Object.entries(STRATEGY_LABELS).map(([value, label]) => ({ value, label }))}
      />
      <p>
        <button type="submit">Change strategy</button>
      </p>
    </PostForm>
  );
}

/** Discard or reopen the request, delete or restore its source branch: for those who may modify it. */
function LifecycleForms({ page, pr, box }: { page: ProjectPageContext; pr: PullRequestRow; box: MergeBoxView }) {
  const open = pr.status === 'OPEN';
  return (
    <>
      {open ? (
        <ButtonForm page={page} pr={pr} action="discard" label="Discard pull request" button="Discard" />
      ) : (
        <ButtonForm page={page} pr={pr} action="reopen" label="Reopen pull request" button="Reopen" />
      )}
      {pr.status === 'MERGED' && box.sourceBranchExists && (
        <ButtonForm page={page} pr={pr} action="delete-source-branch" label="Delete source branch" button={`Delete source branch ${pr.sourceBranch}`} />
      )}
      {!open && !box.sourceBranchExists && pr.sourceProjectId !== null && (
        <ButtonForm page={page} pr={pr} action="restore-source-branch" label="Restore source branch" button={`Restore source branch ${pr.sourceBranch}`} />
      )}
    </>
  );
}

/** The merge box; `names` resolves reviewer ids. */
export function MergeBox({ page, pr, box, names }: { page: ProjectPageContext; pr: PullRequestRow; box: MergeBoxView; names: Map<number, string> }) {
  const signedIn = page.user !== null;
  return (
    <section class="merge-box" aria-labelledby="merge-box">
      <h2 id="merge-box">Merge</h2>
      <PreviewState page={page} pr={pr} box={box} />
      <Checks page={page} box={box} names={names} />
      {signedIn && box.canModify && <StrategyForm page={page} pr={pr} />}
      {signedIn && pr.status === 'OPEN' && <MergeForm page={page} pr={pr} box={box} />}
      {signedIn && box.canModify && <LifecycleForms page={page} pr={pr} box={box} />}
    </section>
  );
}
