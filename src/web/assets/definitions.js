// "Go to definition" of the file view (<form data-definitions="<JSON URL>">, files.tsx): the
// form's name, a name Ctrl- or ⌘-clicked in the code, or the name selected when `d` is pressed,
// is looked up in the project's code index; one definition opens it, several are listed to
// choose from, none is said. Without JavaScript the form opens the project's symbol search.
const form = document.querySelector('form[data-definitions]');
if (form) {
  const input = form.querySelector('input[name="q"]');
  const results = form.querySelector('[data-definition-results]');
  const code = document.querySelector('.file-code');
  const IDENTIFIER = /[\p{L}\p{N}_$]/u;

  const say = (text) => {
    results.replaceChildren(Object.assign(document.createElement('p'), { className: 'meta', textContent: text }));
  };

  const lookUp = async (name) => {
    input.value = name;
    say(`Looking for ${name}…`);
    const url = new URL(form.dataset.definitions, location.href);
    url.searchParams.set('name', name);
    const response = await fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok) {
      say(`The definitions of ${name} could not be read (${response.status}).`);
      return;
    }
    const { definitions } = await response.json();
    if (definitions.length === 0) say(`No definition of ${name} found in the index of this project's default branch.`);
    else if (definitions.length === 1) location.href = definitions[0].url;
    else {
      const list = document.createElement('ul');
      list.className = 'definition-list';
      list.setAttribute('aria-label', `Definitions of ${name}`);
      for (const definition of definitions) {
        const link = Object.assign(document.createElement('a'), { href: definition.url, textContent: `${definition.path}:${definition.line}` });
        const what = `${definition.kind} ${definition.name}${definition.scope ? ` in ${definition.scope}` : ''} · `;
        const item = document.createElement('li');
        item.append(what, link);
        list.append(item);
      }
      results.replaceChildren(
        Object.assign(document.createElement('p'), { className: 'meta', textContent: `${definitions.length} definitions of ${name}:` }),
        list,
      );
      list.querySelector('a').focus();
    }
  };

  /** The identifier around `offset` of a text node's text, or ''. */
  const wordAt = (text, offset) => {
    let start = offset;
    let end = offset;
    while (start > 0 && IDENTIFIER.test(text[start - 1])) start--;
    while (end < text.length && IDENTIFIER.test(text[end])) end++;
    return text.slice(start, end);
  };

  form.addEventListener('submit', (event) => {
    const name = input.value.trim();
    if (!name) return;
    event.preventDefault();
    lookUp(name);
  });

  code?.addEventListener('click', (event) => {
    if (!(event.ctrlKey || event.metaKey)) return;
    const caret = document.caretPositionFromPoint
      ? document.caretPositionFromPoint(event.clientX, event.clientY)
      : document.caretRangeFromPoint?.(event.clientX, event.clientY);
    const node = caret && ('offsetNode' in caret ? caret.offsetNode : caret.startContainer);
    const offset = caret && ('offsetNode' in caret ? caret.offset : caret.startOffset);
    if (!node || node.nodeType !== Node.TEXT_NODE || !code.contains(node)) return;
    const name = wordAt(node.textContent, offset);
    if (!name) return;
    event.preventDefault();
    lookUp(name);
  });

  document.addEventListener('keydown', (event) => {
    if (event.key !== 'd' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target;
    if (target instanceof Element && target.closest('input, textarea, select, [contenteditable]:not([contenteditable="false"])')) return;
    event.preventDefault();
    const selection = document.getSelection();
    const selected = selection && !selection.isCollapsed && code?.contains(selection.anchorNode) ? selection.toString().trim() : '';
    const name = /^[\p{L}\p{N}_$]+$/u.test(selected) ? selected : '';
    if (name) lookUp(name);
    else input.focus();
  });
}
