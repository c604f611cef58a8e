// The proposal's diff against its base: a file list with +/- counts, then each file as a unified or a split
// (side-by-side) table. Every path and line is agent-written text: it only ever reaches the DOM as textContent.
import { el, shortSha } from './format.js';

const CHANGE_WORDS = { ADD: 'added', MODIFY: 'modified', DELETE: 'deleted', RENAME: 'renamed', COPY: 'copied' };

/** Renders `diff` (the API's diff JSON) into `container` in `mode` ('unified' or 'split'). */
export function renderDiff(container, diff, mode) {
  const files = diff.files ?? [];
  const additions = files.reduce((sum, f) => sum + (f.additions ?? 0), 0);
  const deletions = files.reduce((sum, f) => sum + (f.deletions ?? 0), 0);
  const summary = el('p', {},
    `${files.length} file${files.length === 1 ? '' : 's'} changed, `,
    el('span', { class: 'add-count', text: `+${additions}` }), ' ',
    el('span', { class: 'del-count', text: `−${deletions}` }),
    el('span', { class: 'muted', text: ` · ${shortSha(diff.base) || '(root)'} → ${shortSha(diff.head)}` }));
  const parts = [summary];
  if (diff.too_large) {
    // The gateway gave up within its diff budget: say so first, with the ref to fetch instead.
    parts.push(el('p', { class: 'notice too-large', id: 'diff-too-large',
      text: `This diff is ${diff.reason ?? `too large to show here: fetch ${diff.ref ?? 'the proposal ref'} with git to see it.`}` }));
  } else if (diff.truncated) {
    parts.push(el('p', { class: 'notice', text: `The diff is large and was cut short; fetch ${diff.ref ?? 'the proposal ref'} with git to see all of it.` }));
  }
  parts.push(el('ul', { class: 'file-list', id: 'diff-files' }, ...files.map((file, i) => el('li', {},
    el('span', { class: 'add-count', text: `+${file.additions ?? 0}` }), ' ',
    el('span', { class: 'del-count', text: `−${file.deletions ?? 0}` }), ' ',
    el('a', { href: `#file-${i}`, text: displayPath(file) }),
    el('span', { class: 'muted', text: ` ${CHANGE_WORDS[file.change] ?? file.change ?? ''}` })))));
  files.forEach((file, i) => parts.push(renderFile(file, i, mode)));
  container.replaceChildren(...parts);
}

function displayPath(file) {
  const changedPath = (file.change === 'RENAME' || file.change === 'COPY') && file.old_path && file.old_path !== file.path;
  return changedPath ? `${file.old_path} → ${file.path}` : (file.path ?? file.old_path ?? '');
}

function renderFile(file, index, mode) {
  const header = el('header', {},
    el('strong', { text: displayPath(file) }),
    el('span', { class: 'muted', text: ` · ${CHANGE_WORDS[file.change] ?? file.change ?? ''} · ` }),
    el('span', { class: 'add-count', text: `+${file.additions ?? 0}` }), ' ',
    el('span', { class: 'del-count', text: `−${file.deletions ?? 0}` }));
  let body;
  if (file.too_large) {
    body = el('p', { class: 'notice too-large', text: `Too large to show here (${file.reason ?? 'over the diff budget'}).` });
  } else if (file.binary) {
    body = el('p', { class: 'muted', text: 'Binary file, not shown.' });
  } else if (!file.hunks || file.hunks.length === 0) {
    body = el('p', { class: 'muted', text: 'No textual changes.' });
  } else {
    body = el('table', { class: mode }, columns(mode), el('tbody', {},
      ...file.hunks.flatMap((hunk) => (mode === 'split' ? splitRows(hunk) : unifiedRows(hunk)))));
  }
  return el('section', { class: 'file', id: `file-${index}`, 'data-path': file.path ?? '' }, header, body);
}

// Fixed table layout takes widths from the columns, not from the first (full-width hunk header) row.
function columns(mode) {
  const widths = mode === 'split' ? ['num', 'text', 'num', 'text'] : ['num', 'num', 'sign', 'text'];
  return el('colgroup', {}, ...widths.map((cls) => el('col', { class: cls })));
}

function hunkRow(hunk) {
  return el('tr', { class: 'hunk' }, el('td', { colspan: 4, text: hunk.header ?? '' }));
}

function unifiedRows(hunk) {
  const sign = { add: '+', del: '-', context: ' ' };
  return [hunkRow(hunk), ...(hunk.lines ?? []).map((line) => el('tr', { class: line.type, 'data-old': line.old, 'data-new': line.new },
    numberCell(line, 'old', line.type === 'del'),
    numberCell(line, 'new', line.type !== 'del'),
    el('td', { class: 'sign', text: sign[line.type] ?? ' ' }),
    el('td', { class: 'text', text: line.text ?? '' })))];
}

/** Context lines on both sides; each run of deletions faces the run of additions that follows it. */
function splitRows(hunk) {
  const rows = [hunkRow(hunk)];
  const lines = hunk.lines ?? [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].type === 'context') {
      rows.push(pairRow(lines[i], lines[i]));
      i += 1;
      continue;
    }
    const dels = [];
    const adds = [];
    while (i < lines.length && lines[i].type === 'del') {
      dels.push(lines[i++]);
    }
    while (i < lines.length && lines[i].type === 'add') {
      adds.push(lines[i++]);
    }
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      rows.push(pairRow(dels[k], adds[k]));
    }
  }
  return rows;
}

/**
 * A line number; `commentable` marks the one a review comment on the line is written against (the new side, but for
 * a deleted line), where comments.js puts its "+".
 */
function numberCell(line, side, commentable) {
  const number = line[side];
  const marked = commentable && number !== null && number !== undefined;
  return el('td', { class: 'num', text: number ?? '', 'data-comment-side': marked ? side : null, 'data-comment-line': marked ? number : null });
}

function pairRow(left, right) {
  const side = (line, numberKey, cls) => (line
    ? [numberCell(line, numberKey, numberKey === 'new' || line.type === 'del'),
      el('td', { class: line.type === 'context' ? 'text' : `text ${cls}`, text: line.text ?? '' })]
    : [el('td', { class: 'num empty' }), el('td', { class: 'empty' })]);
  return el('tr', { 'data-old': left?.old, 'data-new': right?.new }, ...side(left, 'old', 'del'), ...side(right, 'new', 'add'));
}
