import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/web/markdown.js';

/** References and mentions in rendered Markdown: the domain's grammar, outside code and links. */
describe('Markdown references and mentions', () => {
  const app = { projectPath: 'group/app' };

  it("links issue, pull request and build references of the text's project or a named one", () => {
    const html = renderMarkdown('#12, (issue #3), pr #5, pull request #6, build #7 and other/x#8', app);
    expect(html).toContain('<a class="reference" href="/group/app/~issues/12" rel="nofollow noopener">#12</a>');
    expect(html).toContain('(<a class="reference" href="/group/app/~issues/3" rel="nofollow noopener">issue #3</a>)');
    expect(html).toContain('<a class="reference" href="/group/app/~pulls/5" rel="nofollow noopener">pr #5</a>');
    expect(html).toContain('<a class="reference" href="/group/app/~pulls/6" rel="nofollow noopener">pull request #6</a>');
    expect(html).toContain('<a class="reference" href="/group/app/~builds/7" rel="nofollow noopener">build #7</a>');
    expect(html).toContain('<a class="reference" href="/other/x/~issues/8" rel="nofollow noopener">other/x#8</a>');
    // without a project, only references naming one are linked
    expect(renderMarkdown('#1 and a/b#2')).toBe('<p>#1 and <a class="reference" href="/a/b/~issues/2" rel="nofollow noopener">a/b#2</a></p>\n');
  });

  it('marks mentions, not e-mail addresses, and keeps trailing punctuation out', () => {
    const html = renderMarkdown('Thanks @Bob. Mail a@b.com or x@y', app);
    expect(html).toContain('Thanks <span class="mention">@Bob</span>.');
    expect(html).not.toContain('<span class="mention">@b');
    expect(html).not.toContain('<span class="mention">@y');
  });

  it('leaves code spans, code blocks, links, raw anchors, escapes and entities alone', () => {
    const html = renderMarkdown('`#1 @a` [see #2](https://e.com) <a href="https://e.com">#3 @b</a> \\#4 &#39;\n\n```\n#5 @c\n```\n', app);
    expect(html).not.toContain('class="reference"');
    expect(html).not.toContain('class="mention"');
    expect(html).toContain('<code>#1 @a</code>');
    expect(html).toContain('#4');
  });

  it('keeps sanitizing around the links', () => {
    const html = renderMarkdown('#1 <img src=x onerror=alert(1)> <span class="reference">x</span> [y](javascript:alert(1))', app);
    expect(html).not.toMatch(/onerror|javascript:|<span class="reference"/);
  });
});
