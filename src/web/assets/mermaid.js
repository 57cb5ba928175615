// Draws the page's mermaid diagrams (<pre class="mermaid"> of rendered Markdown): imports
// mermaid's ES module build — named by this script's data-mermaid, served by the asset route —
// only on a page that has one. The SVG mermaid makes carries <style> elements and style
// attributes, which the page's CSP refuses in markup: its rules are adopted as a constructed
// stylesheet and its attributes set through CSSOM. A diagram mermaid cannot read keeps its source.
const blocks = [...document.querySelectorAll('pre.mermaid')];
const source = document.querySelector('script[data-mermaid]')?.dataset.mermaid;

/** The SVG text as a node of this document, its styles applied the way the CSP allows. */
function adopt(svg) {
  const root = new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement;
  for (const style of root.querySelectorAll('style')) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(style.textContent);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    style.remove();
  }
  const inline = [];
  for (const element of [root, ...root.querySelectorAll('[style]')]) {
    if (!element.hasAttribute('style')) continue;
    element.dataset.inlineStyle = String(inline.push(element.getAttribute('style')) - 1);
    element.removeAttribute('style');
  }
  const node = document.importNode(root, true);
  for (const element of [node, ...node.querySelectorAll('[data-inline-style]')]) {
    if (element.dataset.inlineStyle === undefined) continue;
    element.style.cssText = inline[Number(element.dataset.inlineStyle)];
    delete element.dataset.inlineStyle;
  }
  return node;
}

if (blocks.length > 0 && source) {
  const { default: mermaid } = await import(source);
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  // the dark theme's edge labels (#ccc on #585858) fall short of WCAG's contrast: a darker ground
  const themeVariables = dark ? { edgeLabelBackground: '#333333' } : {};
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default', themeVariables });
  for (const [i, block] of blocks.entries()) {
    try {
      const { svg } = await mermaid.render(`mermaid-diagram-${i}`, block.textContent);
      const figure = document.createElement('figure');
      figure.className = 'mermaid-diagram';
      figure.setAttribute('aria-label', 'Diagram');
      // a wide diagram scrolls: from the keyboard too
      figure.tabIndex = 0;
      figure.append(adopt(svg));
      block.replaceWith(figure);
    } catch (error) {
      block.title = `Mermaid could not draw this diagram: ${error.message ?? error}`;
    }
  }
}
