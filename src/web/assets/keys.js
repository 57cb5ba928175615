// Keyboard shortcuts of the code pages, as on GitHub: `t` opens the file finder, `y` turns the
// address into the permalink (the commit instead of the branch or tag), keeping the line anchor.
// They name the links they follow: <a data-key="t">, <a data-key="y">. Keys typed into a field
// (input, textarea, select, editable text) or with a modifier are left alone.
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  const target = event.target;
  if (target instanceof Element && target.closest('input, textarea, select, [contenteditable]:not([contenteditable="false"])')) return;
  const link = document.querySelector(`a[data-key="${event.key}"]`);
  if (!link) return;
  event.preventDefault();
  if (event.key === 'y') history.replaceState(null, '', link.href + location.hash);
  else location.href = link.href;
});
