// The changes tab of a pull request. Inline code comments: a click on a line number opens the
// file's "Comment on a line" form under that line, with the side (the column clicked in the split
// layout) and line filled in; without JavaScript the same form stays in the file's header.
// Viewed marks: ticking a file's "Viewed" box posts its form in place, collapses the file and
// updates the file tree; without JavaScript the box is saved with its button.
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('.diff-file .diff-num a') : null;
  if (!link) return;
  const file = link.closest('.diff-file');
  const details = file?.querySelector('details.line-comment');
  const match = /^(Old|New) line (\d+)$/.exec(link.getAttribute('aria-label') ?? '');
  if (!details || !match) return;
  event.preventDefault();
  const side = details.querySelector('select[name="side"]');
  const wanted = match[1] === 'Old' ? 'old' : 'new';
  if (!side.querySelector(`option[value="${wanted}"]`)) return;
  side.value = wanted;
  details.querySelector('input[name="line"]').value = match[2];
  const row = link.closest('tr');
  let holder = file.querySelector('tr.line-comment-row');
  if (!holder) {
    holder = document.createElement('tr');
    holder.className = 'line-comment-row';
    holder.append(document.createElement('td'));
  }
  holder.firstChild.colSpan = row.closest('table').querySelector('thead tr').children.length;
  row.after(holder);
  holder.firstChild.append(details);
  details.open = true;
  details.querySelector('textarea').focus();
  history.replaceState(null, '', link.getAttribute('href'));
});

const hideSaveButtons = (root) => {
  for (const button of root.querySelectorAll('.viewed-form button[type="submit"]')) button.hidden = true;
};
hideSaveButtons(document);
document.addEventListener('diff:inserted', (event) => hideSaveButtons(event.target));

/** Shows a file as viewed or not: its diff hidden or shown, its tree entry ticked, the count. */
function showViewed(section, viewed) {
  const body = section.querySelector('.diff-body');
  if (body) {
    body.hidden = viewed;
    if (!viewed && body instanceof HTMLDetailsElement) body.open = true;
  }
  const item = document.querySelector(`.diff-tree-file[data-file="${section.id}"]`);
  if (item) {
    item.classList.toggle('diff-tree-viewed', viewed);
    item.querySelector('.diff-tree-mark').textContent = viewed ? ' ✓ viewed' : '';
  }
  const count = document.querySelector('.diff-viewed-n');
  if (count) count.textContent = String(document.querySelectorAll('.diff-tree-viewed').length);
}

document.addEventListener('change', async (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.matches('.viewed-form input[name="viewed"]')) return;
  const form = box.form;
  const response = await fetch(form.action, {
    method: 'POST',
    body: new URLSearchParams(new FormData(form)),
    credentials: 'same-origin',
    redirect: 'manual',
  }).catch(() => null);
  // a refusal shows its message as without JavaScript
  if (!response || (response.type !== 'opaqueredirect' && !response.ok)) form.submit();
  else showViewed(form.closest('.diff-file'), box.checked);
});
