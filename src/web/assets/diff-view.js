// The diff view's links that show more, answered in place: "Show N unchanged lines" and "Load
// diff" name the same page with that gap expanded or that file loaded; a click fetches that page
// and puts its version of the gap (a table body) or the file (a section) in place of the old
// one, then focuses its first line number. Without JavaScript the links open that page.
document.addEventListener('click', async (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-gap], a.diff-load') : null;
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
  const id = link.dataset.gap ?? link.dataset.file;
  const current = id ? document.getElementById(id) : null;
  if (!current) return;
  event.preventDefault();
  link.setAttribute('aria-busy', 'true');
  try {
    const response = await fetch(link.href, { credentials: 'same-origin' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    const fresh = page.getElementById(id);
    if (!fresh) throw new Error(`no ${id}`);
    const node = document.importNode(fresh, true);
    current.replaceWith(node);
    node.dispatchEvent(new CustomEvent('diff:inserted', { bubbles: true }));
    node.querySelector('.diff-num a')?.focus();
  } catch {
    location.href = link.href;
  }
});
