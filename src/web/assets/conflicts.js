// Conflict resolution (/<project>/~pulls/<n>/conflicts): choosing a version for a conflict region
// writes it into the file's text area at once, in place of that region's markers; choosing a
// whole version of a file sets the merge part aside. Without JavaScript the server applies the
// region choices to an unchanged text area. The markers are the page's own: `size` characters,
// longer than any run of them in the file, numbered `#n` on the opening and closing lines.
const MARKS = { open: '<', base: '|', split: '=', close: '>' };

/** Whether `line` is a marker of `kind` of exactly `size` characters. */
function isMarker(line, kind, size) {
  const run = MARKS[kind].repeat(size);
  return line.startsWith(run) && /^(?:[ \r\n]|$)/.test(line.slice(size));
}

/** The regions of a text holding markers: `[{ start, end, ours, base, theirs, number }]` by line index. */
function regionsOf(text, size) {
  const lines = text.split(/(?<=\n)/);
  const regions = [];
  let region = null;
  let part = null;
  lines.forEach((line, i) => {
    if (!region && isMarker(line, 'open', size)) {
      region = { start: i, ours: '', base: '', theirs: '', number: (/ #(\d+) /.exec(line) || [])[1] };
      part = 'ours';
    } else if (region && part === 'ours' && isMarker(line, 'base', size)) part = 'base';
    else if (region && part === 'base' && isMarker(line, 'split', size)) part = 'theirs';
    else if (region && part === 'theirs' && isMarker(line, 'close', size)) {
      regions.push({ ...region, end: i });
      region = null;
    } else if (region) region[part] += line;
  });
  return { lines, regions };
}

/** The text a choice keeps of a region; `open` names the sides whose text ends without a newline at the end of the file. */
function kept(region, choice, open) {
  const side = (name) => (open.includes(name) ? region[name].replace(/\r?\n$/, '') : region[name]);
  if (choice === 'ours') return side('ours');
  if (choice === 'theirs') return side('theirs');
  return region.ours + side('theirs');
}

for (const section of document.querySelectorAll('.conflict-file[data-marker-size]')) {
  const size = Number(section.dataset.markerSize);
  const area = section.querySelector('textarea.conflict-result');
  const merge = section.querySelector('.text-merge');
  if (!area || !merge) continue;
  const status = document.createElement('p');
  status.className = 'meta';
  status.setAttribute('role', 'status');
  area.parentElement.after(status);
  // the text as the page and the choices made it: while it is so, a changed choice rewrites it
  let made = area.value;
  const original = regionsOf(area.defaultValue, size);
  const regionBoxes = [...section.querySelectorAll('.conflict-region')];

  const compose = () => {
    if (original.regions.length !== regionBoxes.length) return null;
    let out = '';
    let line = 0;
    original.regions.forEach((region, k) => {
      const box = regionBoxes[k];
      const choice = box.querySelector('input:checked')?.value;
      out += original.lines.slice(line, region.start).join('');
      const open = (box.dataset.unterminated || '').split(' ');
      out += choice ? kept(region, choice, open) : original.lines.slice(region.start, region.end + 1).join('');
      line = region.end + 1;
    });
    return out + original.lines.slice(line).join('');
  };

  const reset = document.createElement('button');
  reset.type = 'button';
  reset.textContent = 'Reset the text to the choices';
  reset.hidden = true;
  reset.addEventListener('click', () => {
    area.value = made = compose() ?? area.defaultValue;
    reset.hidden = true;
    status.textContent = 'The text follows the choices again.';
  });
  status.after(reset);

  const apply = (box, choice) => {
    const number = String(Number(box.dataset.region) + 1);
    const machine = area.value === made;
    const current = regionsOf(area.value, size);
    const region = current.regions.find((r) => r.number === number);
    if (region) {
      const open = (box.dataset.unterminated || '').split(' ');
      area.value = current.lines.slice(0, region.start).join('') + kept(region, choice, open) + current.lines.slice(region.end + 1).join('');
    } else {
      const composed = machine ? compose() : null;
      if (composed === null) {
        status.textContent = `The text no longer holds conflict ${number}: edit it there, or reset the text to the choices.`;
        reset.hidden = false;
        return;
      }
      area.value = composed;
    }
    if (machine) made = area.value;
    status.textContent = `Conflict ${number}: ${choice === 'both' ? 'both versions' : choice === 'ours' ? 'our version' : 'their version'} kept.`;
  };

  section.addEventListener('change', (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.type !== 'radio') return;
    if (input.name.startsWith('region-')) apply(input.closest('.conflict-region'), input.value);
    else if (input.name.startsWith('choice-')) merge.hidden = input.value !== 'merge';
  });
  const chosen = section.querySelector('input[name^="choice-"]:checked');
  if (chosen) merge.hidden = chosen.value !== 'merge';
}
