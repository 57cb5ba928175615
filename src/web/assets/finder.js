// The file finder (/~find/<revision>): filters the revision's paths as one types with fuzzysort
// (the same ranking as the server's answer to the form), over the path list fetched once as
// JSON; the matched letters are marked. Arrow keys move between the results.
const form = document.querySelector('form[data-finder]');
const input = form.querySelector('input[name="q"]');
const results = document.querySelector('[data-finder-results]');
const count = document.querySelector('[data-finder-count]');
const SHOWN = 100;
const files = form.dataset.files;
const loading = Promise.all([import(form.dataset.fuzzysort), fetch(form.dataset.paths).then((r) => r.json())]);

function link(path, highlighted) {
  const item = document.createElement('li');
  const a = document.createElement('a');
  a.href = files + path.split('/').map(encodeURIComponent).join('/');
  for (const [text, marked] of highlighted) {
    if (!marked) a.append(text);
    else a.append(Object.assign(document.createElement('mark'), { textContent: text }));
  }
  item.append(a);
  return item;
}

async function update() {
  const [fuzzysort, { paths }] = await loading;
  const query = input.value.trim();
  const items = query
    ? fuzzysort.go(query, paths, { limit: SHOWN, threshold: 0 }).map((r) =>
        link(
          r.target,
          r.highlight((m) => [m, true]).map((p) => (typeof p === 'string' ? [p, false] : p)),
        ),
      )
    : paths.slice(0, SHOWN).map((p) => link(p, [[p, false]]));
  results.replaceChildren(...items);
  count.textContent = query
    ? `${items.length === SHOWN ? `${SHOWN}+` : items.length} matching ${items.length === 1 ? 'file' : 'files'}`
    : `${paths.length.toLocaleString('en-US')} files`;
}

input.addEventListener('input', update);
form.addEventListener('submit', (event) => {
  const first = results.querySelector('a');
  if (!first) return;
  event.preventDefault();
  location.href = first.href;
});
document.addEventListener('keydown', (event) => {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  const links = [...results.querySelectorAll('a')];
  const at = links.indexOf(document.activeElement);
  const next = event.key === 'ArrowDown' ? links[at + 1] : at <= 0 ? input : links[at - 1];
  if (!next) return;
  event.preventDefault();
  next.focus();
});
