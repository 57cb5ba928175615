// Global search (docs/compatibility.md#global-search): `/` focuses the header's search box, as on
// GitHub, unless a field has the focus; on the results page the arrow keys move through the
// result links. Without JavaScript the box is a plain GET form.
const box = document.querySelector('.header-search input[name="q"]');
document.addEventListener('keydown', (event) => {
  const target = event.target;
  const typing = target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  if (event.key === '/' && !typing && !event.ctrlKey && !event.metaKey && !event.altKey && box) {
    event.preventDefault();
    box.focus();
    box.select();
    return;
  }
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  const links = [...document.querySelectorAll('.search-results a')];
  if (links.length === 0 || (typing && target.getAttribute('name') !== 'q')) return;
  const at = links.indexOf(document.activeElement);
  const next = event.key === 'ArrowDown' ? Math.min(at + 1, links.length - 1) : at - 1;
  event.preventDefault();
  if (next < 0) (document.getElementById('search-page-q') ?? box)?.focus();
  else links[next].focus();
});
