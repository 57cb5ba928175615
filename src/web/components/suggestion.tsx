/**
 * A code comment's content on the changes tab with its suggested change (docs/compatibility.md#suggested-changes):
 * the Markdown around it through `<Markdown>`, the ```` ```suggestion ```` block as a small diff
 * of the commented lines and the suggested ones, and — for a visitor who may write the source
 * branch — an "Apply suggestion" button and an "Add to batch" checkbox belonging to the one
 * "Commit suggestions" form ({@link SuggestionBatch}), so several suggestions go in one commit.
 */
import type { CodeCommentRow, RequestSuggestions, SuggestionView } from '../../domain/code-comments/index.js';
import { splitSuggestions } from '../../domain/code-comments/index.js';
import type { PullRequestRow } from '../../domain/pulls/index.js';
import type { ProjectPageContext } from '../page.js';
import { HiddenFields, PostForm } from './forms.js';
import { Markdown } from './markdown.js';

/** The id of the batch form the comments' checkboxes belong to. */
const BATCH_FORM = 'suggestion-batch';

/** Where suggestions of request `pr` are applied (POST). */
export function suggestionsAction(page: ProjectPageContext, pr: PullRequestRow): string {
  return `/${page.project.path}/~pulls/${pr.number}/suggestions`;
}

/** The form field naming comment `id` among those applied: `comment-<id>=on`. */
export const suggestionField = (id: number) => `comment-${id}`;

/** The commented lines (removed) and the suggested ones (added), as a diff. */
function SuggestionDiff({ view, lines }: { view: SuggestionView | undefined; lines: string[] }) {
  return (
    <figure class="suggestion">
      <figcaption>Suggested change</figcaption>
      <pre class="suggestion-diff">
        {view?.oldLines.map((line, i) => (
          <del key={`o${i}`}>{`- ${line}\n`}</del>
        ))}
        {lines.map((line, i) => (
          <ins key={`n${i}`}>{`+ ${line}\n`}</ins>
        ))}
      </pre>
    </figure>
  );
}

/** A code comment's content: Markdown, its suggestion drawn as a diff, and the apply controls. */
export function CodeCommentContent({
  page,
  pr,
  comment,
  suggestions,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  comment: CodeCommentRow;
  suggestions: RequestSuggestions;
}) {
  const view = suggestions.views.get(comment.id);
  let first = true;
  const parts = splitSuggestions(comment.content).map((part, i) => {
    if (part.kind === 'text') return <Markdown key={i} text={part.text} />;
    const shown = <SuggestionDiff key={i} view={first ? view : undefined} lines={part.lines} />;
    first = false;
    return shown;
  });
  const applicable = view !== undefined && suggestions.canApply && !comment.resolved;
  return (
    <>
      {parts}
      {applicable && (
        <div class="suggestion-actions">
          <PostForm page={page} action={suggestionsAction(page, pr)} class="inline" label={`Apply the suggestion of code comment ${comment.id}`}>
            <HiddenFields fields={{ [suggestionField(comment.id)]: 'on' }} />
            <button type="submit">Apply suggestion</button>
          </PostForm>
          <span class="check">
            <input type="checkbox" id={`batch-${comment.id}`} name={suggestionField(comment.id)} value="on" form={BATCH_FORM} />
            <label for={`batch-${comment.id}`}>Add to batch</label>
          </span>
        </div>
      )}
    </>
  );
}

/**
 * The form committing the suggestions checked with "Add to batch" in one commit, with an optional
 * message; nothing when the visitor can apply none.
 */
export function SuggestionBatch({
  page,
  pr,
  suggestions,
  comments,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  suggestions: RequestSuggestions;
  comments: CodeCommentRow[];
}) {
  if (!suggestions.canApply || !comments.some((c) => !c.resolved && suggestions.views.has(c.id))) return null;
  return (
    <section aria-labelledby="suggestion-batch-heading" class="suggestion-batch">
      <h2 id="suggestion-batch-heading">Batch of suggestions</h2>
      <p class="meta">The suggestions checked with "Add to batch" go in one commit on the source branch.</p>
      <PostForm page={page} action={suggestionsAction(page, pr)} id={BATCH_FORM} label="Commit the suggestions added to the batch">
        <p class="field">
          <label for="batch-message">Commit message (optional)</label>
          <input id="batch-message" name="message" type="text" />
        </p>
        <p>
          <button type="submit">Commit suggestions</button>
        </p>
      </PostForm>
    </section>
  );
}
