/**
 * `/<project>/~pulls/<number>/changes`: the request's diff — all changes, one update's, or the
 * range a code comment was made in — drawn by `<DiffView>`, with the request's code comments
 * under the lines they mark: add (a per-file form; pull-changes.js moves it under the line whose
 * number is clicked), reply and resolve, through the code comment functions of the API
 * (`POST /~api/code-comments`, `/code-comment-replies`, `/code-comments/{id}`). A signed-in
 * reviewer marks files viewed (a form per file; pull-changes.js posts it in place): a viewed file
 * is collapsed and ticked in the file tree until a later update changes it.
 */
import type { VNode } from 'preact';
import {
  type CodeCommentReplyRow,
  type CodeCommentRow,
  createCodeComment,
  createCodeCommentReply,
  getCodeComment,
  requestCodeComments,
  requestCommentRange,
  updateCodeComment,
} from '../../../domain/code-comments/index.js';
import { setFileViewed, viewedFiles } from '../../../domain/diff-views/index.js';
import { getProjectRow } from '../../../domain/projects/index.js';
import { changesRange, type ChangesRange, type PullRequestRow, userNames, wholeLineRange } from '../../../domain/pulls/index.js';
import { diffCommits, type DiffLine, type FileDiff } from '../../../domain/repositories/index.js';
import { NotFound } from '../../../errors.js';
import { DiffView, diffFileKey, diffLineId } from '../../components/diff.js';
import { DiffLayoutToggle, diffViewState } from '../../components/diff-state.js';
import { Markdown } from '../../components/markdown.js';
import { PostForm } from '../../components/forms.js';
import { Flash } from '../../components/flash.js';
import { ProjectLayout } from '../../components/project-layout.js';
import type { PageResult, ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { pullAction, PullHeader, pullUrl, requestOfPage, When } from './shared.js';
import { TextArea } from '../../components/controls.js';
// suggested changes (docs/compatibility.md#suggested-changes)
import { requestSuggestions, type RequestSuggestions } from '../../../domain/code-comments/index.js';
import { CodeCommentContent, SuggestionBatch } from '../../components/suggestion.js';

/** The view of the changes tab a URL or form names: `update=<id>`, `comment=<id>` or all changes (''). */
function viewOf(fields: Record<string, string>): { updateId?: number; commentId?: number; query: string } {
  if (/^\d{1,12}$/.test(fields.update ?? '')) return { updateId: Number(fields.update), query: `?update=${fields.update}` };
  if (/^\d{1,12}$/.test(fields.comment ?? '')) return { commentId: Number(fields.comment), query: `?comment=${fields.comment}` };
  return { query: '' };
}

/** Hidden fields keeping the view a form returns to. */
function ViewFields({ range, commentId }: { range: ChangesRange; commentId?: number }) {
  if (range.updateId !== null) return <input type="hidden" name="update" value={String(range.updateId)} />;
  if (commentId !== undefined) return <input type="hidden" name="comment" value={String(commentId)} />;
  return null;
}

interface Thread {
  comment: CodeCommentRow;
  replies: CodeCommentReplyRow[];
}

/** Where a comment sits in this diff: `new|old` NUL path NUL 1-based line. */
const placeKey = (side: 'new' | 'old', path: string, line: number) => `${side}\0${path}\0${line}`;

function CommentThread({
  page,
  pr,
  thread,
  names,
  range,
  commentId,
  suggestions,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  thread: Thread;
  names: Map<number, string>;
  range: ChangesRange;
  commentId?: number;
  suggestions: RequestSuggestions;
}) {
  const { comment } = thread;
  const url = (rest: string) => pullUrl(page.project.path, pr.number, `/code-comments/${comment.id}/${rest}`);
  return (
    <article class="code-comment" id={`code-comment-${comment.id}`} aria-label={`Code comment by ${names.get(comment.userId) ?? 'unknown'}`}>
      <p class="meta">
        <strong>{names.get(comment.userId) ?? 'unknown'}</strong> <When date={comment.createDate} />
        {' · '}
        <span class={comment.resolved ? 'status status-successful' : 'status'}>{comment.resolved ? 'Resolved' : 'Unresolved'}</span>
      </p>
      <CodeCommentContent page={page} pr={pr} comment={comment} suggestions={suggestions} />
      {thread.replies.map((reply) => (
        <div class="reply" key={reply.id} id={`code-comment-reply-${reply.id}`}>
          <p class="meta">
            <strong>{names.get(reply.userId) ?? 'unknown'}</strong> <When date={reply.date} />
          </p>
          <Markdown text={reply.content} />
        </div>
      ))}
      {page.user && (
        <div class="thread-actions">
          <PostForm page={page} action={url('replies')} label={`Reply to code comment ${comment.id}`}>
            <ViewFields range={range} commentId={commentId} />
            <TextArea name="content" label="Reply" id={`reply-${comment.id}`} rows={2} required />
            <p>
              <button type="submit">Reply</button>
            </p>
          </PostForm>
          <PostForm page={page} action={url('resolve')} label={comment.resolved ? 'Unresolve' : 'Resolve'}>
            <ViewFields range={range} commentId={commentId} />
            <input type="hidden" name="resolved" value={comment.resolved ? 'false' : 'true'} />
            <button type="submit">{comment.resolved ? 'Unresolve' : 'Resolve'}</button>
          </PostForm>
        </div>
      )}
    </article>
  );
}

/** The per-file form adding a comment on a line (pull-changes.js moves it under a clicked line). */
function LineCommentForm({
  page,
  pr,
  file,
  range,
  commentId,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  file: FileDiff;
  range: ChangesRange;
  commentId?: number;
}) {
  if (file.binary) return null;
  const key = diffFileKey(file);
  const sides = [...(file.newPath !== null ? [{ value: 'new', label: 'New' }] : []), ...(file.oldPath !== null ? [{ value: 'old', label: 'Old' }] : [])];
  return (
    <details class="line-comment" data-file={key}>
      <summary>Comment on a line</summary>
      <PostForm page={page} action={pullUrl(page.project.path, pr.number, '/changes/comments')} label={`Comment on ${file.newPath ?? file.oldPath}`}>
        <ViewFields range={range} commentId={commentId} />
        <input type="hidden" name="old" value={range.oldCommitHash} />
        <input type="hidden" name="new" value={range.newCommitHash} />
        {file.newPath !== null && <input type="hidden" name="newPath" value={file.newPath} />}
        {file.oldPath !== null && <input type="hidden" name="oldPath" value={file.oldPath} />}
        <p class="field-row">
          <span class="field">
            <label for={`side-${key}`}>Side</label>
            <select id={`side-${key}`} name="side">
              {sides.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </span>
          <span class="field">
            <label for={`line-${key}`}>Line</label>
            <input id={`line-${key}`} name="line" type="text" inputMode="numeric" pattern="[0-9]+" size={6} required />
          </span>
        </p>
        <TextArea name="content" label="Comment (Markdown)" id={`content-${key}`} rows={3} required />
        <p>
          <button type="submit">Add comment</button>
        </p>
      </PostForm>
    </details>
  );
}

/** What a viewed mark of `file` holds: its new blob, or `deleted:<old blob>` for a deleted file. */
const viewedMark = (file: FileDiff) => (file.newBlob !== null ? file.newBlob : `deleted:${file.oldBlob ?? ''}`);

/** The per-file "Viewed" checkbox (a form; pull-changes.js posts it when ticked and hides its button). */
function ViewedForm({
  page,
  pr,
  file,
  viewed,
  range,
  commentId,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  file: FileDiff;
  viewed: boolean;
  range: ChangesRange;
  commentId?: number;
}) {
  const path = file.newPath ?? file.oldPath ?? '';
  const id = `viewed-${diffFileKey(file)}`;
  return (
    <PostForm page={page} action={pullUrl(page.project.path, pr.number, '/changes/viewed')} class="viewed-form" label={`Viewed: ${path}`}>
      <ViewFields range={range} commentId={commentId} />
      <input type="hidden" name="path" value={path} />
      <input type="hidden" name="blob" value={viewedMark(file)} />
      <input type="checkbox" id={id} name="viewed" value="true" checked={viewed} />
      <label for={id}>Viewed</label> <button type="submit">Save</button>
    </PostForm>
  );
}

/**
 * Places the request's code comments in `diff`: each thread under the first shown line it marks
 * (by diff line id), the others — marked in other commits or on lines not shown — in `elsewhere`.
 */
function placeThreads(
  comments: Awaited<ReturnType<typeof requestCodeComments>>,
  range: ChangesRange,
  diff: { files: FileDiff[] },
): { atLine: Map<string, Thread[]>; elsewhere: Thread[] } {
  const placed = new Map<string, Thread[]>();
  const elsewhere: Thread[] = [];
  for (const comment of comments.comments) {
    const thread = { comment, replies: comments.replies.get(comment.id) ?? [] };
    const side = comment.markCommitHash === range.newCommitHash ? 'new' : comment.markCommitHash === range.oldCommitHash ? 'old' : null;
    if (side === null) {
      elsewhere.push(thread);
      continue;
    }
    const key = placeKey(side, comment.markPath, comment.markToRow + 1);
    placed.set(key, [...(placed.get(key) ?? []), thread]);
  }
  const atLine = new Map<string, Thread[]>();
  for (const file of placed.size === 0 ? [] : diff.files) {
    for (const hunk of file.hunks) {
      for (const line of hunk.lines) {
        const keys = [
          ...(line.newLine !== null && file.newPath !== null ? [placeKey('new', file.newPath, line.newLine)] : []),
          ...(line.oldLine !== null && file.oldPath !== null ? [placeKey('old', file.oldPath, line.oldLine)] : []),
        ];
        for (const key of keys) {
          const list = placed.get(key);
          if (!list) continue;
          const id = diffLineId(file, line);
          atLine.set(id, [...(atLine.get(id) ?? []), ...list]);
          placed.delete(key);
        }
      }
    }
  }
  for (const list of placed.values()) elsewhere.push(...list);
  return { atLine, elsewhere };
}

/** The form choosing the changes shown (all, or one update's), and the two commits compared. */
function RangeChooser({ base, range }: { base: string; range: ChangesRange }) {
  return (
    <>
      <form method="get" action={base} class="compare" aria-label="Changes to show">
        <p class="field">
          <label for="field-update">Changes of</label>
          <select id="field-update" name="update">
            <option value="" selected={range.updateId === null}>
              All changes
            </option>
            {range.updates.map((u) => (
              <option key={u.id} value={String(u.id)} selected={u.id === range.updateId}>{`Update ${u.index}: ${u.headCommitHash.slice(0, 8)}`}</option>
            ))}
          </select>
        </p>
        <p>
          <button type="submit">Show</button>
        </p>
      </form>
      <p class="meta">
        {'Comparing '}
        <code>{range.oldCommitHash.slice(0, 8)}</code>
        {' with '}
        <code>{range.newCommitHash.slice(0, 8)}</code>
      </p>
    </>
  );
}

/** Renders the changes tab of `pr`, with a refused action's message. */
export async function changesPage(page: ProjectPageContext, pr: PullRequestRow, fields: Record<string, string>, error: string | null = null): Promise<VNode> {
  const view = viewOf(fields);
  const comment = view.commentId === undefined ? undefined : await requestCommentRange(page.ctx, pr, view.commentId);
  const range = await changesRange(page.ctx, pr, { updateId: view.updateId, comment });
  const [diff, threads, source, marks] = await Promise.all([
    diffCommits(page.ctx, pr.targetProjectId, range.oldCommitHash, range.newCommitHash),
    requestCodeComments(page.ctx, pr),
    pr.sourceProjectId === null ? Promise.resolve(null) : getProjectRow(page.ctx.db, pr.sourceProjectId),
    viewedFiles(page.ctx, pr.id),
  ]);
  const state = await diffViewState(page, pr.targetProjectId, diff);
  const isViewed = (file: FileDiff) => marks.get(file.newPath ?? file.oldPath ?? '') === viewedMark(file);
  const names = await userNames(page.ctx, [
    pr.submitterId,
    ...threads.comments.map((c) => c.userId),
    ...[...threads.replies.values()].flat().map((r) => r.userId),
  ]);
  const { atLine, elsewhere } = placeThreads(threads, range, diff);
  const suggestions = await requestSuggestions(page.ctx, pr, threads.comments);
  const threadView = (thread: Thread) => (
    <CommentThread
      key={thread.comment.id}
      page={page}
      pr={pr}
      thread={thread}
      names={names}
      range={range}
      commentId={view.commentId}
      suggestions={suggestions}
    />
  );
  const below = (file: FileDiff, line: DiffLine) => atLine.get(diffLineId(file, line))?.map(threadView);
  const base = pullUrl(page.project.path, pr.number, '/changes');
  return (
    <ProjectLayout
      page={page}
      tab="pulls"
      title={`Changes · #${pr.number} ${pr.title}`}
      scripts={page.user ? ['diff-view.js', 'pull-changes.js'] : ['diff-view.js']}
    >
      <PullHeader page={page} pr={pr} tab="changes" submitter={names.get(pr.submitterId) ?? 'unknown'} sourcePath={source?.path ?? null} />
      <Flash error={error} />
      <RangeChooser base={base} range={range} />
      <section aria-labelledby="diff">
        <h2 id="diff">Files</h2>
        <DiffLayoutToggle page={page} layout={state.layout} />
        <DiffView
          diff={diff}
          state={state}
          headingLevel={3}
          renderBelowLine={atLine.size > 0 ? below : undefined}
          isViewed={page.user ? isViewed : undefined}
          isCollapsed={isViewed}
          renderFileActions={
            page.user
              ? (file) => (
                  <>
                    <ViewedForm page={page} pr={pr} file={file} viewed={isViewed(file)} range={range} commentId={view.commentId} />
                    <LineCommentForm page={page} pr={pr} file={file} range={range} commentId={view.commentId} />
                  </>
                )
              : undefined
          }
        />
      </section>
      {elsewhere.length > 0 && (
        <section aria-labelledby="other-comments">
          <h2 id="other-comments">Comments on other versions</h2>
          {elsewhere.map((thread) => (
            <div key={thread.comment.id}>
              <p>
                <a href={`${base}?comment=${thread.comment.id}#code-comment-${thread.comment.id}`}>
                  <code>{`${thread.comment.markPath}:${thread.comment.markToRow + 1}`}</code>
                </a>
              </p>
              {threadView(thread)}
            </div>
          ))}
        </section>
      )}
      <SuggestionBatch page={page} pr={pr} suggestions={suggestions} comments={threads.comments} />
    </ProjectLayout>
  );
}

/** Back to the changes tab in the view the form came from, at `anchor`. */
function backTo(page: ProjectPageContext, pr: PullRequestRow, anchor: string): string {
  return pullUrl(page.project.path, pr.number, `/changes${viewOf(page.form).query}#${anchor}`);
}

/** The request's code comment `:commentId` (404 unless made on this request). */
async function commentOfRequest(page: ProjectPageContext, pr: PullRequestRow): Promise<CodeCommentRow> {
  const id = /^\d{1,12}$/.test(page.params.commentId ?? '') ? Number(page.params.commentId) : Number.NaN;
  const comment = Number.isNaN(id) ? null : await getCodeComment(page.ctx, id);
  if (!comment || comment.comparePullRequestId !== pr.id) throw new NotFound(`Code comment not found: ${page.params.commentId}`);
  return comment;
}

/**
 * A POST action of the changes tab: `run` with the request, then back to the tab in the view the
 * form came from, at the anchor `anchor` names for `run`'s result; a refusal shows the tab with the message.
 */
function changesAction<T>(path: string, run: (page: ProjectPageContext, pr: PullRequestRow) => Promise<T>, anchor: (result: T) => string): ProjectPageRoute {
  return pullAction(
    path,
    run,
    (page, pr, result) => backTo(page, pr, anchor(result)),
    (page, pr, error) => changesPage(page, pr, page.form, error),
  );
}

/** The routes of the changes tab. */
export const changesRoutes: ProjectPageRoute[] = [
  {
    method: 'GET',
    path: '/~pulls/:number/changes',
    handler: async (page): Promise<PageResult> => changesPage(page, await requestOfPage(page), page.query),
  },
  changesAction(
    'changes/comments',
    async (page, pr) => {
      const { form } = page;
      const side = form.side === 'old' ? 'old' : 'new';
      const path = (side === 'old' ? form.oldPath : form.newPath) ?? '';
      const commitHash = (side === 'old' ? form.old : form.new) ?? '';
      const line = /^\d{1,9}$/.test(form.line ?? '') ? Number(form.line) : Number.NaN;
      const range = await wholeLineRange(page.ctx, pr.targetProjectId, commitHash, path, line);
      return createCodeComment(page.ctx, {
        projectId: pr.targetProjectId,
        content: form.content ?? '',
        mark: { commitHash, path, range },
        compareContext: { pullRequestId: pr.id, oldCommitHash: form.old ?? '', newCommitHash: form.new ?? '', currentFile: path },
      });
    },
    (id) => `code-comment-${id}`,
  ),
  changesAction(
    'changes/viewed',
    async (page, pr) => {
      const path = page.form.path ?? '';
      await setFileViewed(page.ctx, pr.id, path, page.form.blob ?? '', page.form.viewed === 'true');
      return diffFileKey({ oldPath: path, newPath: path });
    },
    (key) => `diff-${key}`,
  ),
  changesAction(
    'code-comments/:commentId/replies',
    async (page, pr) => {
      const comment = await commentOfRequest(page, pr);
      return createCodeCommentReply(page.ctx, {
        commentId: comment.id,
        content: page.form.content ?? '',
        compareContext: {
          pullRequestId: pr.id,
          oldCommitHash: comment.compareOldCommitHash,
          newCommitHash: comment.compareNewCommitHash,
          currentFile: comment.markPath,
        },
      });
    },
    (id) => `code-comment-reply-${id}`,
  ),
  changesAction(
    'code-comments/:commentId/resolve',
    async (page, pr) => {
      const comment = await commentOfRequest(page, pr);
      await updateCodeComment(page.ctx, comment.id, { resolved: page.form.resolved === 'true' });
      return comment.id;
    },
    (id) => `code-comment-${id}`,
  ),
];
