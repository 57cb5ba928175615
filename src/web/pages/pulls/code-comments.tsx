/**
 * `/<project>/~pulls/<number>/code-comments`: the request's code comments, filtered by the code
 * comment query language (docs/compatibility.md#code-comments-query-language, as `GET /~api/code-comments?
 * pullRequestId=…&query=…`), newest activity first, paged; each links to its place on the
 * changes tab.
 */
import { queryCodeComments } from '../../../domain/code-comments/index.js';
import { getProjectRow } from '../../../domain/projects/index.js';
import { userNames } from '../../../domain/pulls/index.js';
import { Markdown } from '../../components/markdown.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { QueryBox } from '../../components/query-box.js';
import { Pager, queryPage } from '../../components/query-list.js';
import type { PageResult, ProjectPageContext } from '../../page.js';
import { PullHeader, pullUrl, requestOfPage, When } from './shared.js';

/** Comments per page. */

/** GET `/<project>/~pulls/<number>/code-comments`. */
export async function codeCommentList(page: ProjectPageContext): Promise<PageResult> {
  const pr = await requestOfPage(page);
  const list = await queryPage(page, '', (query, offset, count) => queryCodeComments(page.ctx, { pullRequestId: pr.id }, query, offset, count));
  const comments = list.rows;
  const [names, source] = await Promise.all([
    userNames(page.ctx, [pr.submitterId, ...comments.map((c) => c.userId)]),
    pr.sourceProjectId === null ? Promise.resolve(null) : getProjectRow(page.ctx.db, pr.sourceProjectId),
  ]);
  const action = pullUrl(page.project.path, pr.number, '/code-comments');
  return (
    <ProjectLayout page={page} tab="pulls" title={`Code comments · #${pr.number} ${pr.title}`}>
      <PullHeader page={page} pr={pr} tab="code-comments" submitter={names.get(pr.submitterId) ?? 'unknown'} sourcePath={source?.path ?? null} />
      <h2>Code comments</h2>
      <QueryBox action={action} query={list.query} example="unresolved" error={list.error} />
      {!list.error && comments.length === 0 && <p class="empty">No code comment found.</p>}
      {comments.length > 0 && (
        <ul class="list code-comments">
          {comments.map((c) => (
            <li key={c.id}>
              <p>
                <a href={pullUrl(page.project.path, pr.number, `/changes?comment=${c.id}#code-comment-${c.id}`)}>
                  <code>{`${c.markPath}:${c.markToRow + 1}`}</code>
                </a>
                <span class="meta">
                  {` ${names.get(c.userId) ?? 'unknown'} · ${c.resolved ? 'resolved' : 'unresolved'} · ${c.replyCount} ${c.replyCount === 1 ? 'reply' : 'replies'} · ${c.lastActivityDescription} `}
                  <When date={c.lastActivityDate} />
                </span>
              </p>
              <Markdown text={c.content} />
            </li>
          ))}
        </ul>
      )}
      <Pager action={action} list={list} />
    </ProjectLayout>
  );
}
