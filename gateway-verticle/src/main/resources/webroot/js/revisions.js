// A job's chain of revisions on the proposal page, and the owner's "Request changes" form that starts the next one.
// The review texts are the owner's but may quote the agent's hostile code: they reach the DOM as textContent only,
// their control characters shown as visible symbols, as review comments are.
import { api, jobPagePath, showError } from './api.js';
import { inert } from './comments.js';
import { el, shortSha, statusBadge } from './format.js';

/** Renders `job.revisions` (first job first) into `list`, the job shown marked; hides `section` for a lone job. */
export function renderRevisions(section, list, job) {
  const revisions = job.revisions ?? [];
  section.hidden = revisions.length === 0;
  list.replaceChildren(...revisions.map((r) => {
    const current = r.id === job.id;
    const link = el('a', { href: jobPagePath(job.repo, r.id), text: `Revision ${r.revision}`,
      'aria-current': current ? 'page' : null });
    const comments = r.review?.comments?.length ?? 0;
    return el('li', { class: current ? 'current' : null, 'data-revision': r.revision, 'data-job': r.id },
      el('div', { class: 'revision-head' },
        el('strong', {}, link),
        el('code', { text: r.id }),
        statusBadge(r),
        el('span', { class: 'revision-work muted', text: workText(r) }),
        el('span', { class: 'revision-decision', text: decisionText(r.decision) }),
        current ? el('span', { class: 'badge', text: 'this page' }) : null),
      r.review
        ? el('div', {},
          el('div', { class: 'revision-review', text: inert(r.review.text || '(no text)') }),
          comments ? el('span', { class: 'muted', text: `with ${comments} review comment${comments === 1 ? '' : 's'}` }) : null)
        : el('div', { class: 'muted', text: 'The first job.' }));
  }));
}

function workText(revision) {
  if (revision.proposal_sha) {
    return `proposal ${shortSha(revision.proposal_sha)}`;
  }
  return revision.partial_sha ? `partial work ${shortSha(revision.partial_sha)}` : 'no work';
}

function decisionText(decision) {
  if (!decision) {
    return '';
  }
  return decision.decision === 'approved' ? `approved → ${decision.branch ?? ''}` : decision.decision;
}

/**
 * Whether the owner may ask for changes to the job: it has finished with work (a proposal or partial work), and
 * no revision of it has work yet (one that ended with none can be replaced; one with work is revised in turn).
 */
export function canRequestChanges(job) {
  if (job.status !== 'finished' || !(job.proposal_sha || job.partial_sha)) {
    return false;
  }
  const next = job.revised_by ? (job.revisions ?? []).find((r) => r.id === job.revised_by) : null;
  return !(next && (next.proposal_sha || next.partial_sha || next.status !== 'finished'));
}

/** The "Request changes" form: the owner's text, the open review comments, and an exec job's new commands. */
export class RevisionRequest {
  constructor({ jobPath, form }) {
    this.jobPath = jobPath;
    this.form = form;
    this.job = null;
    this.commentIds = [];
    const $ = (id) => document.getElementById(id);
    this.fields = { text: $('revise-text'), note: $('revise-comments-note'), execRow: $('revise-exec-row'),
      exec: $('revise-exec'), test: $('revise-test'), send: $('revise-send'), error: $('revise-error') };
    $('revise-cancel').addEventListener('click', () => this.close());
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.send();
    });
  }

  /** Shows the form for `job`, counting the review comments the revision will be given. */
  async open(job) {
    this.job = job;
    const exec = Boolean(job.exec);
    this.fields.execRow.hidden = !exec;
    this.fields.exec.required = exec;
    showError(this.fields.error, '');
    this.form.hidden = false;
    this.fields.text.focus();
    await this.countComments();
  }

  close() {
    this.form.hidden = true;
  }

  /** The job's comments on the work as it is now (not outdated): those are the ones the revision addresses. */
  async countComments() {
    this.fields.note.textContent = 'Counting the review comments…';
    try {
      this.commentsLoaded(await api('GET', `${this.jobPath}/comments`));
    } catch (e) {
      this.commentIds = [];
      this.fields.note.textContent = '';
      showError(this.fields.error, `Cannot load the review comments: ${e.message}`);
    }
  }

  /** Takes the job's comments as the page loaded them again (one added while the form is open counts too). */
  commentsLoaded(comments) {
    this.commentIds = comments.filter((c) => !c.outdated).map((c) => c.id);
    const n = this.commentIds.length;
    this.fields.note.textContent = n === 0 ? 'No review comments will be included (none on the current commit).'
      : `${n} review comment${n === 1 ? '' : 's'} on the current commit will be included.`;
  }

  async send() {
    const body = { comments: this.commentIds };
    const text = this.fields.text.value.trim();
    if (text) {
      body.task = text;
    }
    if (this.job.exec) {
      const exec = this.fields.exec.value.trim();
      if (!exec) {
        showError(this.fields.error, 'An exec job is revised with a new exec command.');
        return;
      }
      body.exec = exec;
      if (this.fields.test.value.trim()) {
        body.test_command = this.fields.test.value.trim();
      }
    }
    this.fields.send.disabled = true;
    showError(this.fields.error, '');
    try {
      const revision = await api('POST', `${this.jobPath}/revise`, body);
      location.assign(jobPagePath(revision.repo ?? this.job.repo, revision.id));
    } catch (e) {
      showError(this.fields.error, `Request changes failed: ${e.message}`);
      this.fields.send.disabled = false;
    }
  }
}
