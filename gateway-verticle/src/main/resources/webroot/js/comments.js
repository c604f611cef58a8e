// The owner's review comments on the proposal page: one per line of the diff (a "+" by each line's number opens a
// box under it) and the summary comment above the diff. A comment may quote hostile code: its text only ever reaches
// the DOM as textContent, and its control characters (an ANSI escape's ESC included) are shown as visible symbols,
// never passed on to anything that could act on them.
import { api, showError } from './api.js';
import { dateTime, el, shortSha } from './format.js';

/** The gateway's limit (NewComment.MAX_BODY_BYTES): checked here too, to say so before sending. */
const MAX_COMMENT_BYTES = 8192;

/** `text` with C0 controls (but tab and newline) and DEL as Unicode control pictures: ESC shows as ␛. */
export function inert(text) {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g,
    (c) => (c === '\u007f' ? '\u2421' : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

/**
 * The comments of one job, shown in `list` (summary, outdated and unplaced ones) and in the diff under `diffRoot`;
 * `onLoad` is given the comments after every load.
 */
export class ReviewComments {
  constructor({ jobPath, list, diffRoot, onLoad = () => {} }) {
    this.jobPath = jobPath;
    this.onLoad = onLoad;
    this.list = list;
    this.diffRoot = diffRoot;
    this.comments = [];
    this.head = null;
  }

  async load() {
    this.comments = await api('GET', `${this.jobPath}/comments`);
    this.render();
    this.onLoad(this.comments);
  }

  /** The diff shown now: new comments are written on its head commit, and only it has a "+" by its lines. */
  setDiff(diff) {
    this.head = diff?.head ?? null;
  }

  /** Shows the comments (again): after every load and every rendering of the diff. */
  render() {
    const placed = new Map();
    const unplaced = [];
    for (const c of this.comments) {
      const row = c.path && !c.outdated ? this.rowOf(c) : null;
      if (row) {
        placed.set(row, [...(placed.get(row) ?? []), c]);
      } else {
        unplaced.push(c);
      }
    }
    this.list.replaceChildren(...(unplaced.length
      ? unplaced.map((c) => card(c, true))
      : [el('p', { class: 'muted', text: 'No comments yet.' })]));
    this.diffRoot.querySelectorAll('tr.comment-row').forEach((row) => row.remove());
    for (const [row, comments] of placed) {
      row.after(el('tr', { class: 'comment-row' }, el('td', { colspan: 4 }, ...comments.map((c) => card(c, false)))));
    }
    this.addButtons();
  }

  /** Adds `{body, path?, side?, line?}` on the commit shown; rejects with the server's message. */
  async add(comment) {
    if (new TextEncoder().encode(comment.body).length > MAX_COMMENT_BYTES) {
      throw new Error(`a comment may have at most ${MAX_COMMENT_BYTES / 1024} KiB of text`);
    }
    await api('POST', `${this.jobPath}/comments`, { ...comment, commit: this.head ?? undefined });
    await this.load();
  }

  /** The diff row a comment is on: its file's row with that line number on that side. */
  rowOf(comment) {
    const file = [...this.diffRoot.querySelectorAll('section.file')].find((s) => s.dataset.path === comment.path);
    const key = comment.side === 'old' ? 'old' : 'new';
    return [...(file?.querySelectorAll('tr') ?? [])].find((r) => r.dataset[key] === String(comment.line)) ?? null;
  }

  addButtons() {
    if (!this.head) {
      return;
    }
    for (const cell of this.diffRoot.querySelectorAll('td[data-comment-side]')) {
      if (cell.querySelector('button.comment-add')) {
        continue;
      }
      const side = cell.dataset.commentSide;
      const line = Number(cell.dataset.commentLine);
      const button = el('button', { type: 'button', class: 'comment-add', title: 'Comment on this line',
        'aria-label': `Comment on ${side} line ${line}`, text: '+' });
      button.addEventListener('click', () => this.openForm(cell, side, line));
      cell.prepend(button);
    }
  }

  openForm(cell, side, line) {
    const row = cell.closest('tr');
    const path = cell.closest('section.file').dataset.path;
    const open = row.nextElementSibling;
    if (open?.classList.contains('comment-form')) {
      open.querySelector('textarea').focus();
      return;
    }
    const text = el('textarea', { class: 'comment-text', rows: 3, 'aria-label': `Comment on ${path}, ${side} line ${line}` });
    const send = el('button', { type: 'submit', class: 'primary', text: 'Comment' });
    const cancel = el('button', { type: 'button', text: 'Cancel' });
    const error = el('p', { class: 'error', role: 'alert', hidden: true });
    const form = el('form', { class: 'comment-form' }, text, el('div', { class: 'comment-buttons' }, send, cancel), error);
    const formRow = el('tr', { class: 'comment-form' }, el('td', { colspan: 4 }, form));
    cancel.addEventListener('click', () => formRow.remove());
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      send.disabled = true;
      try {
        await this.add({ body: text.value, path, side, line });
        formRow.remove();
      } catch (e) {
        showError(error, `Comment failed: ${e.message}`);
      } finally {
        send.disabled = false;
      }
    });
    row.after(formRow);
    text.focus();
  }
}

function card(comment, withPlace) {
  const place = comment.path ? `${comment.path}, ${comment.side} line ${comment.line}` : 'Summary';
  return el('article', { class: comment.outdated ? 'comment outdated' : 'comment', 'data-comment-id': comment.id },
    el('header', {},
      withPlace ? el('strong', { text: `${place} ` }) : null,
      el('span', { class: 'muted', text: `${comment.author ?? ''} · ${dateTime(comment.at)} · on ${shortSha(comment.commit)}` }),
      comment.outdated ? el('span', { class: 'badge outdated', text: 'outdated' }) : null),
    el('div', { class: 'comment-body', text: inert(comment.body ?? '') }));
}
