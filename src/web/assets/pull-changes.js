// Inline code comments on a pull request's changes tab: a click on a line number opens the
// file's "Comment on a line" form under that line, with the side and line filled in. Without
// JavaScript the same form stays in the file's header.
for (const link of document.querySelectorAll('.diff-file .diff-num a')) {
  link.addEventListener('click', (event) => {
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
      const cell = document.createElement('td');
      cell.colSpan = 3;
      holder.append(cell);
    }
    row.after(holder);
    holder.firstChild.append(details);
    details.open = true;
    details.querySelector('textarea').focus();
    history.replaceState(null, '', `#${row.id}`);
  });
}
