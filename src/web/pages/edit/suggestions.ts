/**
 * POST `/<project>/~pulls/<number>/suggestions`: applies the suggested changes of the code
 * comments named by the form's `comment-<id>=on` fields in one commit on the request's source
 * branch (applySuggestions, docs/compatibility.md#suggested-changes), then goes back to the changes
 * tab at the first comment; a refusal shows the changes tab with the domain's message.
 */
import { applySuggestions } from '../../../domain/code-comments/index.js';
import type { ProjectPageRoute } from '../../page.js';
import { changesPage } from '../pulls/changes.js';
import { pullAction, pullUrl } from '../pulls/shared.js';

/** The comment ids a form names, in the form's order. */
function chosenComments(form: Record<string, string>): number[] {
  return Object.keys(form).flatMap((name) => {
    const match = /^comment-(\d{1,12})$/.exec(name);
    return match && form[name] === 'on' ? [Number(match[1])] : [];
  });
}

/** The route applying suggestions. */
export const applySuggestionsRoute: ProjectPageRoute = pullAction(
  'suggestions',
  async (page, pr) => {
    const ids = chosenComments(page.form);
    await applySuggestions(page.ctx, pr.id, ids, page.form.message ?? '');
    return ids[0];
  },
  (page, pr, first) => pullUrl(page.project.path, pr.number, `/changes#code-comment-${first}`),
  (page, pr, error) => changesPage(page, pr, {}, error),
);
