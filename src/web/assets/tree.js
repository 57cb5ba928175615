// A tree view shown before its last commits were read (<p data-last-commits="<JSON URL>">):
// fetches the cells, rendered and escaped by the server, and fills each entry's row
// (<tr data-entry="<name>">). Without JavaScript the notice's link shows the page once read.
const status = document.querySelector('[data-last-commits]');
if (status) {
  const response = await fetch(status.dataset.lastCommits);
  if (response.ok) {
    const { rows } = await response.json();
    for (const row of document.querySelectorAll('tr[data-entry]')) {
      const cells = rows[row.dataset.entry];
      if (!cells) continue;
      row.querySelector('.tree-commit').innerHTML = cells.commit;
      row.querySelector('.tree-date').innerHTML = cells.date;
    }
    status.remove();
  }
}
