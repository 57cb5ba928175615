/** Markdown display: the one place rendered Markdown enters a page. */
import { renderMarkdown, type MarkdownContext } from '../markdown.js';

/**
 * Renders Markdown source as sanitized HTML inside `<div class="markdown">`; `project` (a
 * project path) is where `#12`-style references without a path point; `base` (for a file of a
 * repository) is where its relative links and images point (see {@link MarkdownContext}).
 */
export function Markdown({ text, project, base }: { text: string; project?: string; base?: MarkdownContext['base'] }) {
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(text, { projectPath: project ?? null, base }) }} />;
}
