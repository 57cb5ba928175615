import { describe, expect, it } from 'vitest';
import { highlightFile, languageOf } from '../../src/web/highlight.js';
import { renderMarkdown } from '../../src/web/markdown.js';

/** The two helpers that produce raw HTML for pages: Markdown and code highlighting. */
describe('page rendering helpers', () => {
  it('highlights by file name and escapes the source', () => {
    expect(languageOf('src/app.ts')).toBe('typescript');
    expect(languageOf('Makefile')).toBe('makefile');
    expect(languageOf('notes.unknownext')).toBeNull();
    const html = highlightFile('a'.repeat(40), 'x.ts', 'const a = "<b>";\n');
    expect(html).toContain('<span class="hljs-keyword">const</span>');
    expect(html).toContain('&lt;b&gt;');
    expect(html).not.toContain('<b>');
    expect(highlightFile('b'.repeat(40), 'notes.unknownext', '<script>x</script>')).toBe('&#60;script&#62;x&#60;/script&#62;');
  });

  it('keeps Markdown formatting and drops active content', () => {
    const html = renderMarkdown(
      '**bold** [x](javascript:alert(1)) <iframe src="https://e.com"></iframe> <span style="color:red" onmouseover="x()">s</span>\n\n```ts\nlet a;\n```\n',
    );
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code class="language-ts">');
    expect(html).not.toMatch(/javascript:|<iframe|style=|onmouseover/);
  });

  it('renders task list checkboxes read-only and named by their state', () => {
    const html = renderMarkdown('- [x] tests\n- [ ] docs\n\n<input type="checkbox" aria-label="spoof">\n');
    expect(html.match(/<input[^>]*>/g)).toEqual([
      '<input checked disabled type="checkbox" aria-label="Done" />',
      '<input disabled type="checkbox" aria-label="Not done" />',
      '<input type="checkbox" aria-label="Not done" disabled />',
    ]);
  });

  it('points relative links and images of a repository file into the repository', () => {
    const base = { files: '/app/~files/main/docs/', raw: '/app/~raw/main/docs/' };
    const html = renderMarkdown('[guide](guide.md#start) [up](../README.md) ![logo](img/logo.png) [abs](/x) [web](https://e.com/a) [top](#usage)\n', {
      projectPath: 'app',
      base,
    });
    expect(html.match(/(?:href|src)="[^"]*"/g)).toEqual([
      'href="/app/~files/main/docs/guide.md#start"',
      'href="/app/~files/main/README.md"',
      'src="/app/~raw/main/docs/img/logo.png"',
      'href="/x"',
      'href="https://e.com/a"',
      'href="#usage"',
    ]);
    expect(renderMarkdown('[guide](guide.md)\n')).toContain('href="guide.md"');
  });
});
