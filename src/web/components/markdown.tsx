/** Markdown display: the one place rendered Markdown enters a page. */
import { assetUrl, MERMAID_URL } from '../assets.js';
import { renderMarkdown, type MarkdownContext } from '../markdown.js';

/**
 * Renders Markdown source as sanitized HTML inside `<div class="markdown">`; `project` (a
 * project path) is where `#12`-style references without a path point; `base` (for a file of a
 * repository) is where its relative links and images point (see {@link MarkdownContext}).
 * Math brings KaTeX's stylesheet along, a mermaid block the module that draws it (mermaid.js,
 * which loads mermaid itself from `MERMAID_URL`): pages without either load neither.
 */
export function Markdown({ text, project, base }: { text: string; project?: string; base?: MarkdownContext['base'] }) {
  const html = renderMarkdown(text, { projectPath: project ?? null, base });
  return (
    <>
      <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />
      {html.includes('<span class="katex">') && <link rel="stylesheet" href={assetUrl('katex.css')} />}
      {html.includes('<pre class="mermaid">') && <script type="module" src={assetUrl('mermaid.js')} data-mermaid={MERMAID_URL} />}
    </>
  );
}
