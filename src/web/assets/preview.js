// Markdown preview of comment and description forms: a "Preview" button with
// data-preview="#textarea-id" posts the text to /~markdown-preview (the server renders it
// through the same sanitizer as saved text) and shows the rendered part in the element
// "#textarea-id-preview". Without JavaScript the button submits to the preview page instead.
for (const button of document.querySelectorAll('button[data-preview]')) {
  button.addEventListener('click', async (event) => {
    const source = document.querySelector(button.dataset.preview);
    const output = document.querySelector(`${button.dataset.preview}-preview`);
    const form = button.form;
    if (!source || !output || !form) return;
    event.preventDefault();
    const fields = new URLSearchParams({
      _csrf: form.elements.namedItem('_csrf')?.value ?? '',
      project: form.elements.namedItem('project')?.value ?? '',
      text: source.value,
    });
    button.disabled = true;
    try {
      const response = await fetch('/~markdown-preview', { method: 'POST', body: fields, credentials: 'same-origin' });
      const page = new DOMParser().parseFromString(await response.text(), 'text/html');
      const rendered = page.querySelector('main .markdown');
      output.replaceChildren(...(rendered && response.ok ? [document.importNode(rendered, true)] : [document.createTextNode('Preview failed.')]));
      output.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
}
