// Copy buttons: <button data-copy="#input-id"> copies the value (or text) of the element named
// by the selector and says so for a moment. Without JavaScript the input stays selectable.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const text = 'value' in source ? source.value : source.textContent;
    const label = button.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      source.select?.();
      button.textContent = 'Press Ctrl+C';
    }
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  });
}
