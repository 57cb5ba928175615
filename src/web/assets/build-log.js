// Live build log: a <pre data-follow="…/log?follow=true&from=N"> already holds the log up to byte
// N; this module streams the rest (the server keeps the response open while the build runs),
// appends it, keeps the view at the bottom when the reader was there, and reloads the page once
// the build has finished so status, artifacts and buttons are current. Without JavaScript, or
// when the stream fails, the page shows the log so far and its refresh link ([data-live-note]).
const log = document.querySelector('pre[data-follow]');
const note = document.querySelector('[data-live-note]');
if (log) {
  follow(log).catch(() => {
    if (note) note.hidden = false;
  });
}

async function follow(pre) {
  const response = await fetch(pre.dataset.follow, { headers: { accept: 'text/plain' } });
  if (!response.ok || !response.body) return;
  if (note) note.hidden = true;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const atBottom = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
    const pageAtBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 24;
    pre.append(value);
    if (atBottom) pre.scrollTop = pre.scrollHeight;
    if (pageAtBottom) window.scrollTo(0, document.documentElement.scrollHeight);
  }
  setTimeout(() => location.reload(), 300);
}
