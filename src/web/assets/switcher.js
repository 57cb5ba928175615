// The branch and tag switcher (<details data-switcher>): typing in its input hides the branches
// and tags that do not contain the text; Enter with exactly one left opens it, otherwise the
// form opens what was typed (a commit, say). Opening the menu focuses the input; Escape closes it.
for (const menu of document.querySelectorAll('details[data-switcher]')) {
  const input = menu.querySelector('[data-filter-input]');
  const items = [...menu.querySelectorAll('[data-filter-list] li')];
  const none = menu.querySelector('[data-filter-none]');
  const visible = () => items.filter((item) => !item.hidden);
  menu.addEventListener('toggle', () => {
    if (menu.open) input.focus();
  });
  menu.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    menu.open = false;
    menu.querySelector('summary').focus();
  });
  input.addEventListener('input', () => {
    const text = input.value.trim().toLowerCase();
    for (const item of items) item.hidden = !item.textContent.toLowerCase().includes(text);
    for (const list of menu.querySelectorAll('[data-filter-list]')) {
      const group = list.previousElementSibling;
      const empty = [...list.children].every((item) => item.hidden);
      list.hidden = empty;
      if (group) group.hidden = empty;
    }
    none.hidden = visible().length > 0;
  });
  input.form.addEventListener('submit', (event) => {
    const left = visible();
    if (input.value.trim() === '' || left.length !== 1) return;
    event.preventDefault();
    location.href = left[0].querySelector('a').href;
  });
}
