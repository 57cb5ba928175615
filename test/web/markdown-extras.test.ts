import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetUrl, MERMAID_URL, shippedBytes } from '../../src/web/assets.js';
import { renderMarkdown } from '../../src/web/markdown.js';
import { givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

const README = `# Notes

- [x] tables
- [ ] more

| Name | Value |
|:-----|------:|
| pi   | 3.14  |

Euler: $e^{i\\pi} + 1 = 0$, which costs $5 and $6.

$$
\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}
$$

\`\`\`mermaid
graph TD
  A[Start] --> B[End]
\`\`\`

A claim[^src] and another[^2], and one without definition[^none].

[^src]: The *source*, see #1.
[^2]: Second
    over two lines.
`;

/** Markdown beyond GFM's core: math (KaTeX, as MathML), mermaid blocks, footnotes; and what the pages load for them. */
describe('markdown math, diagrams and footnotes', () => {
  it('renders math with KaTeX as MathML, inline, displayed and in math blocks, and leaves prices alone', () => {
    const html = renderMarkdown('Inline $a^2$ and $$b_1$$ but $5 and $6 or $ x $.\n\n$$\n\\frac{1}{2}\n$$\n\n```math\n\\sqrt{x}\n```\n');
    expect(html).toContain('<span class="katex"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><msup><mi>a</mi><mn>2</mn></msup></mrow>');
    expect(html).toContain('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><msub><mi>b</mi><mn>1</mn></msub>');
    expect(html).toContain('but $5 and $6 or $ x $.');
    expect(html).toContain(
      '<div class="math-display" tabindex="0"><span class="katex"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><mfrac>',
    );
    expect(html).toContain('<msqrt><mi>x</mi></msqrt>');
    expect(html).toContain('<annotation encoding="application/x-tex">\\frac{1}{2}</annotation>');
    expect(html).not.toContain('style=');
  });

  it('shows a formula KaTeX refuses as its source, and never lets math carry links or styles', () => {
    expect(renderMarkdown('$\\frac{$ x')).toContain('<code class="math-error">\\frac{</code> x');
    const refused = renderMarkdown('$$\\frac{$$');
    expect(refused).toContain('<code class="math-error">\\frac{</code>');
    const tricky = renderMarkdown('$\\href{javascript:alert(1)}{x} \\htmlStyle{color:red}{y}$ <math><mi href="javascript:alert(1)" style="x">z</mi></math>');
    expect(tricky).not.toMatch(/href=|style=/);
    expect(tricky).toContain('<math><mi>z</mi></math>');
  });

  it('turns a mermaid block into its escaped source for the browser to draw', () => {
    const html = renderMarkdown('```mermaid\ngraph TD; A-->B<script>\n```\n');
    expect(html).toContain('<pre class="mermaid">graph TD; A--&gt;B&lt;script&gt;</pre>');
  });

  it('numbers footnotes in order of reference, links both ways, and leaves undefined ones as text', () => {
    const html = renderMarkdown(README, { projectPath: 'app' });
    expect(html).toContain('A claim<sup><a href="#user-content-fn-src" id="user-content-fnref-src" rel="nofollow noopener">1</a></sup>');
    expect(html).toContain('another<sup><a href="#user-content-fn-2" id="user-content-fnref-2" rel="nofollow noopener">2</a></sup>');
    expect(html).toContain('without definition[^none].');
    expect(html).toContain(
      '<section class="footnotes"><ol><li id="user-content-fn-src"><p>The <em>source</em>, see <a class="reference" href="/app/~issues/1" rel="nofollow noopener">#1</a>. <a href="#user-content-fnref-src" aria-label="Back to reference 1" rel="nofollow noopener">↩</a></p></li>',
    );
    expect(html).toContain('<li id="user-content-fn-2"><p>Second\nover two lines. <a href="#user-content-fnref-2"');
    // ids of the text itself cannot clobber the page's
    expect(renderMarkdown('<a id="main" href="#x">x</a> <li id="csrf">y</li>')).not.toMatch(/id="(main|csrf)"/);
    // only a displayed formula is focusable
    expect(renderMarkdown('<div tabindex="5">x</div><div class="math-display" tabindex="-1">y</div>')).toBe(
      '<div>x</div><div class="math-display" tabindex="0">y</div>',
    );
  });

  it('keeps GFM tables and task lists', () => {
    const html = renderMarkdown(README);
    expect(html).toContain('<th align="left">Name</th>');
    expect(html).toContain('<td align="right">3.14</td>');
    expect(html).toContain('<input checked disabled type="checkbox" aria-label="Done" />');
  });

  it('keeps mermaid out of the JS budget and everything else in it', () => {
    expect(assetUrl('fuzzysort.js')).toMatch(/^\/~assets\/fuzzysort\.[0-9a-f]{12}\.js$/);
    expect(shippedBytes().js).toBeLessThan(60 * 1024);
  });

  describe('over HTTP', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer();
      await givenRepo(server, 'notes', { files: { 'README.md': README, 'plain/README.md': '# Plain\n' } });
    }, 60_000);
    afterAll(async () => {
      await removeWorkTrees();
      await server?.close();
    });
    const get = (path: string) =>
      fetch(`${server.url}${path}`, { headers: { authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` } });

    it('loads KaTeX styles and the mermaid module only on pages that need them', async () => {
      const html = await (await get('/notes')).text();
      expect(html).toContain(`<link rel="stylesheet" href="${assetUrl('katex.css')}"/>`);
      expect(html).toContain(`<script type="module" src="${assetUrl('mermaid.js')}" data-mermaid="${MERMAID_URL}"></script>`);
      const plain = await (await get('/notes/~files/main/plain')).text();
      expect(plain).not.toContain('katex');
      expect(plain).not.toContain('mermaid');
    });

    it('serves KaTeX styles with their fonts and mermaid with its chunks, nothing else of node_modules', async () => {
      const css = await get(assetUrl('katex.css'));
      expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
      const font = /url\((fonts\/KaTeX_Main-Regular\.woff2)\)/.exec(await css.text())![1];
      const fontResponse = await get(`/~assets/${font}`);
      expect(fontResponse.status).toBe(200);
      expect(fontResponse.headers.get('content-type')).toBe('font/woff2');
      const entry = await get(MERMAID_URL);
      expect(entry.status).toBe(200);
      expect(entry.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const chunk = /from"\.\/(chunks\/mermaid\.esm\.min\/[\w-]+\.mjs)"/.exec(await entry.text())![1];
      expect((await get(MERMAID_URL.replace('mermaid.esm.min.mjs', chunk))).status).toBe(200);
      for (const outside of ['../package.json', 'mermaid.js', 'chunks/mermaid.esm.min/../../mermaid.js', '%2e%2e/package.json']) {
        expect((await get(MERMAID_URL.replace('mermaid.esm.min.mjs', outside))).status).toBe(404);
      }
    });
  });
});
