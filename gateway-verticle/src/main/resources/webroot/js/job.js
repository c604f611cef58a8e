// The proposal page, /repos/:name/agent-jobs/:id: the job, its live log, the proposal's diff (or, read-only, the
// partial work a stopped job left) with the owner's review comments on it, the test result, the audit trail, and the
// owner's decisions (approve, reject, cancel, delete the job's refs, request changes: a revision); for a job in a chain
// of revisions, the chain and the choice of diffing a revision's own changes or all of the chain's.
import { api, groupPagePath, jobApiPath, jobPagePath, requireSession, showError, wireTopBar } from './api.js';
import { ReviewComments } from './comments.js';
import { confirmDialog } from './dialog.js';
import { renderDiff } from './diff-view.js';
import { age, dateTime, el, jobTitle, shortSha, statusBadge } from './format.js';
import { LogFollower } from './log-follow.js';
import { LogView } from './log-view.js';
import { canRequestChanges, renderRevisions, RevisionRequest } from './revisions.js';

const POLL_MS = 5000;
const STATUS_ORDER = ['queued', 'dispatched', 'started', 'finished'];
const [, repoPart, idPart] = location.pathname.match(/^\/repos\/([^/]+)\/agent-jobs\/([^/]+)\/?$/) ?? [];
const repo = decodeURIComponent(repoPart ?? '');
const id = decodeURIComponent(idPart ?? '');
const jobPath = jobApiPath(repo, id);

const $ = (elementId) => document.getElementById(elementId);
const buttons = { approve: $('approve'), reject: $('reject'), cancel: $('cancel'), deleteRefs: $('delete-refs'),
  requestChanges: $('request-changes') };

let job = null;
let audit = [];
let diffMode = 'unified';
/** For a revision: 'cumulative' (against the chain's original base) or 'revision' (its own changes). */
let diffScope = 'cumulative';
let diff = null;
let diffLoadedFor;
let busy = false;
let refreshing = null;
let refreshAgain = false;
const revisionRequest = new RevisionRequest({ jobPath, form: $('revise-form') });
const review = new ReviewComments({ jobPath, list: $('review-comments'), diffRoot: $('diff'),
  onLoad: (comments) => revisionRequest.commentsLoaded(comments) });

// ---- job, diff and audit --------------------------------------------------------------------------------

/** Reloads the job and what depends on it; calls made while one runs are folded into one more run. */
function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      await loadJob();
    } while (refreshAgain);
    refreshing = null;
  })();
  return refreshing;
}

/**
 * Refreshes until the job reaches `status`: a websocket frame can overtake the gateway's own record of the
 * change by a moment.
 */
async function refreshUntil(status, tries = 10) {
  await refresh();
  if (job && STATUS_ORDER.indexOf(job.status) < STATUS_ORDER.indexOf(status) && tries > 0) {
    setTimeout(() => refreshUntil(status, tries - 1), 300);
  }
}

async function loadJob() {
  try {
    [job, audit] = await Promise.all([api('GET', jobPath), api('GET', `/api/v1/agent-jobs?job=${encodeURIComponent(id)}`)]);
    showError($('page-error'), '');
  } catch (e) {
    showError($('page-error'), `Cannot load job ${id}: ${e.message}`);
    return;
  }
  renderJob();
  renderAudit();
  loadRecords();
  await loadDiff();
  await loadComments();
}

async function loadComments() {
  $('summary-form').hidden = !reviewedWork();
  try {
    await review.load();
  } catch (e) {
    showError($('comment-error'), `Cannot load the review comments: ${e.message}`);
  }
}

/** The runner's records of the job's network attempts and model calls (best effort: NATS may be down). */
async function loadRecords() {
  try {
    const [egress, calls] = await Promise.all([api('GET', `${jobPath}/egress`), api('GET', `${jobPath}/model-calls`)]);
    renderEgress(egress);
    renderModelCalls(calls);
  } catch (e) {
    $('egress').tBodies[0].replaceChildren(el('tr', {}, el('td', { colspan: 6, class: 'muted', text: `Not available: ${e.message}` })));
  }
}

function renderEgress(attempts) {
  $('egress').tBodies[0].replaceChildren(...attempts.map((a) => el('tr', { 'data-allowed': String(a.allowed) },
    el('td', { text: dateTime(a.started_epoch_ms) }),
    el('td', { class: 'mono', text: `${a.method ?? ''} ${a.host}:${a.port}` }),
    el('td', { text: a.via ?? '' }),
    el('td', { text: a.allowed ? (a.failure ? `allowed, ${a.failure}` : 'allowed') : `refused${a.failure ? `: ${a.failure}` : ''}` }),
    el('td', { class: 'mono', text: `${a.bytes_up ?? 0} / ${a.bytes_down ?? 0}` }),
    el('td', { text: a.phase ?? '' }))));
}

function renderModelCalls(calls) {
  if (calls.length === 0) {
    $('model-calls').replaceChildren(el('p', { class: 'muted', text: 'None.' }));
    return;
  }
  $('model-calls').replaceChildren(...calls.map((c) => el('details', {},
    el('summary', { text: `#${c.seq} ${c.model} → ${c.status}, ${c.input_tokens} in / ${c.output_tokens} out tokens, `
      + `${c.duration_ms} ms${c.error ? ` (${c.error})` : ''}` }),
    el('pre', { class: 'mono', text: c.request + (c.truncated ? '\n… (truncated)' : '') }))));
}

/**
 * The work the page reviews: the proposal, or else the partial work an agent pushed when a limit stopped it,
 * which is shown read-only (the gateway never approves it).
 */
function reviewedWork() {
  // Only a revision has two scopes; the gateway's default is the cumulative one.
  const scope = job.revises ? diffScope : null;
  const query = (ref) => {
    const params = new URLSearchParams();
    if (ref) {
      params.set('ref', ref);
    }
    if (scope) {
      params.set('scope', scope);
    }
    const text = params.toString();
    return text ? `?${text}` : '';
  };
  if (job.proposal_sha) {
    return { kind: 'proposal', sha: job.proposal_sha, scope, path: `${jobPath}/diff${query(null)}` };
  }
  if (job.partial_sha) {
    return { kind: 'partial', sha: job.partial_sha, scope, path: `${jobPath}/diff${query('partial')}` };
  }
  return null;
}

/** The scope switch of a revision's diff, and what the shown diff is against. */
function renderScopeTools() {
  $('scope-tools').hidden = !job.revises;
  if (!job.revises) {
    return;
  }
  $('scope-revision').setAttribute('aria-pressed', String(diffScope === 'revision'));
  $('scope-cumulative').setAttribute('aria-pressed', String(diffScope === 'cumulative'));
  const revised = (job.revisions ?? []).find((r) => r.id === job.revises);
  $('scope-note').textContent = diffScope === 'revision'
    ? `Revision ${job.revision}'s own changes, on top of revision ${revised?.revision ?? '?'}'s ${job.revises_work ?? 'work'}`
    : `Everything since the chain's original base ${shortSha(job.original_base_sha)}: what approving brings`;
}

const WHY_STOPPED = {
  budget_exceeded: 'its model token budget was spent',
  timeout: 'its wall-clock limit was reached',
  step_limit: 'the agent reached its step limit',
  provider_error: 'the model provider failed',
  agent_unavailable: "the job's agent is not installed in its image or does not speak the runner's model provider",
  agent_failed: 'the coding agent exited with an error on its own (its output is in the log)',
};

function renderWorkLabel(work) {
  const partial = work?.kind === 'partial';
  $('diff-heading').textContent = partial ? 'Partial work' : 'Proposal';
  $('partial-note').hidden = !partial;
  if (partial) {
    const reason = job.exit_reason ?? 'early';
    const why = WHY_STOPPED[job.exit_reason] ? ` (${WHY_STOPPED[job.exit_reason]})` : '';
    const ended = job.status === 'finished' ? `the job ended ${reason}${why}` : 'the job is being stopped';
    $('partial-note').textContent = `Partial work, ${ended}: this is what the agent had pushed to `
      + `refs/agents/${job.id}/partial when it stopped, not a finished proposal. It is shown for review only `
      + 'and cannot be approved.';
  }
}

async function loadDiff() {
  const work = reviewedWork();
  const key = work ? `${work.kind}:${work.sha}:${work.scope}` : null;
  // Partial work can be pushed before the job's end is recorded: the label follows the status.
  renderWorkLabel(work);
  if (key === diffLoadedFor) {
    return;
  }
  if (!work) {
    diff = null;
    diffLoadedFor = null;
    review.setDiff(null);
    renderEnvironmentWarning();
    $('diff').replaceChildren(el('p', { class: 'muted', text: job.status === 'finished' ? 'This job has no proposal.' : 'No proposal yet.' }));
    return;
  }
  try {
    diff = await api('GET', work.path);
    diffLoadedFor = key;
    renderDiff($('diff'), diff, diffMode);
    review.setDiff(diff);
    renderEnvironmentWarning();
    renderRewriteNote();
  } catch (e) {
    diff = null;
    review.setDiff(null);
    renderEnvironmentWarning();
    renderRewriteNote();
    $('diff').replaceChildren(el('p', { class: 'muted', text: `No diff: ${e.message}` }));
  }
}

/**
 * A revision whose agent rewrote history does not descend from the base its diff is against: the gateway then
 * compares trees, so work the rewrite dropped shows as removed, and the owner is told why.
 */
function renderRewriteNote() {
  const rewritten = diff?.descends_from_base === false;
  $('rewrite-note').hidden = !rewritten;
  $('rewrite-note').textContent = rewritten ? `This work does not have ${shortSha(diff.base)} in its history (the `
    + 'agent rewrote history): the diff compares the two trees, so anything the rewrite dropped shows as removed.' : '';
}

/**
 * A proposal that touches .spbgit/ changes the job environment of every later job once it is on the default branch
 * (its image, setup script, and the hosts setup and the agent may reach): the owner is told before approving.
 */
function renderEnvironmentWarning() {
  $('environment-warning').hidden = !(diff && diff.changes_environment && reviewedWork()?.kind === 'proposal');
  renderDependenciesNote();
}

/**
 * Setup never runs on a job's work, so a change to a cache key file (a lockfile) is not what this job's tests ran
 * with: its dependencies are set up for jobs once the owner approves it.
 */
function renderDependenciesNote() {
  const changed = diff?.changes_cache_key_files ?? [];
  const note = $('dependencies-note');
  note.hidden = changed.length === 0;
  note.textContent = changed.length === 0 ? '' : `This work changes ${changed.join(', ')} (cache key files of the `
    + `environment). Setup runs only on what you pushed or approved (${shortSha(job.original_base_sha)} for this job), `
    + 'never on a job\'s work: this job and its tests ran with the dependencies set up from there, and the changed '
    + 'dependencies are set up for jobs once you approve it.';
}

/** The job's environment as job_created recorded it, and how the runner started it; all text, never markup. */
function renderEnvironment() {
  const env = job.environment;
  if (!env) {
    $('environment').replaceChildren(el('dt', { text: 'Image' }), el('dd', { text: 'base (recorded before environments)' }));
    return;
  }
  const hosts = (list) => (list?.length ? el('ul', { class: 'host-list' }, ...list.map((h) => el('li', {}, el('code', { text: h }))))
    : 'none');
  const cache = { hit: 'hit (restored; setup skipped)', miss: 'miss (setup ran)', none: 'none (nothing cached)' };
  const rows = [
    ['Image', el('code', { id: 'environment-image', text: env.image ?? 'base' })],
    ['Image digest', job.image_digest ? el('code', { id: 'image-digest', text: job.image_digest }) : '— (not started)'],
    ['Cache', job.cache ? el('span', { id: 'environment-cache', text: cache[job.cache] ?? job.cache }) : '— (not started)'],
    ...cacheRows(job.setup),
    ['Setup egress', hosts(env.setup_egress)],
    ['Agent egress', hosts(env.egress)],
    ['Cached paths', hosts(env.cache)],
    ['Cache key files', hosts(env.cache_key_files)],
    ['Setup script', env.setup ? el('details', { id: 'setup-script' }, el('summary', { text: `${env.setup.trimEnd().split('\n').length} lines` }),
      el('pre', { class: 'mono', text: env.setup })) : 'none'],
    ['Hash', el('code', { text: `${env.hash ?? ''}${env.blob ? ` (blob ${shortSha(env.blob)})` : ' (no .spbgit/agent.yml)'}` })],
  ];
  $('environment').replaceChildren(...rows.flatMap(([name, value]) => [el('dt', { text: name }), el('dd', {}, value)]));
}

/** What the runner reported of setup: who kept a restored cache, whether this setup's was kept, what it changed. */
function cacheRows(setup) {
  if (!setup) {
    return [];
  }
  const rows = [];
  if (setup.cache_key) {
    const producer = setup.cache_producer ?? {};
    const by = producer.job
      ? [' kept by job ', el('a', { id: 'cache-producer', href: jobPagePath(job.repo, producer.job), text: producer.job }),
        ...(producer.commit ? [' from ', el('code', { text: shortSha(producer.commit) })] : [])]
      : [' (kept by a runner that did not record who produced it)'];
    rows.push(['Cache restored', el('span', { id: 'cache-restored' }, el('code', { text: setup.cache_key.slice(0, 16) }), ...by)]);
  }
  if (setup.cache_note) {
    rows.push(['Cache kept', el('span', { id: 'cache-note', text: setup.cache_note })]);
  }
  if (setup.setup_changes?.length) {
    rows.push(['Setup changed', el('details', { id: 'setup-changes' },
      el('summary', { text: `${setup.setup_changes.length} paths in the checkout (not proposed)` }),
      el('pre', { class: 'mono', text: setup.setup_changes.join('\n') }))]);
  }
  return rows;
}

function renderJob() {
  const revised = job.revision > 1;
  const title = jobTitle(job);
  $('task').textContent = title;
  $('task-full').hidden = !revised;
  $('task-full-text').textContent = revised ? job.task : '';
  document.title = `${title} · agent job · SPB Git`;
  $('status').replaceChildren(statusBadge(job));
  $('decision').replaceChildren(...decisionBadge());
  $('facts').replaceChildren(...facts().flatMap(([name, value]) => [el('dt', { text: name }), el('dd', {}, value)]));
  $('facts').dataset.proposalSha = job.proposal_sha ?? '';
  // The gateway cannot know every runner's catalogue: it says what the job waits for, not that none exists.
  $('waiting-for').hidden = !job.waiting_for;
  $('waiting-for').textContent = job.waiting_for ? `Waiting for ${job.waiting_for}.` : '';
  renderEnvironment();
  renderTestResult();
  renderActions();
  renderRevisions($('revisions'), $('revision-list'), job);
  renderScopeTools();
}

function decisionBadge() {
  const d = job.decision;
  if (!d) {
    return [];
  }
  const text = d.decision === 'approved' ? `approved → ${d.branch} at ${shortSha(d.sha)}`
    : d.decision === 'superseded' ? `superseded by ${d.superseded_by}` : 'rejected';
  return [el('span', { class: `badge ${d.decision}`, id: 'decision-badge', text })];
}

function facts() {
  const when = (ts) => (ts ? `${dateTime(ts)} (${age(ts)})` : '—');
  const rows = [
    ['Repository', job.repo],
    ['Job', el('code', { text: job.id })],
    ...(job.group ? [['Group', el('a', { id: 'group-link', href: groupPagePath(job.repo, job.group),
      text: `best-of-N group ${job.group}: compare its attempts` })]] : []),
    ...(job.revises ? [['Revises', el('a', { id: 'revises-link', href: jobPagePath(job.repo, job.revises),
      text: `job ${job.revises}'s ${job.revises_work ?? 'work'} (this is revision ${job.revision})` })]] : []),
    ['Exit reason', el('span', { id: 'exit-reason', text: job.exit_reason
      ? `${job.exit_reason}${WHY_STOPPED[job.exit_reason] ? ` (${WHY_STOPPED[job.exit_reason]})` : ''}` : '—' })],
    ['Base', el('code', { text: `${job.base ?? ''} ${shortSha(job.base_sha)}`.trim() || '—' })],
    ['Proposal', job.proposal_sha ? el('code', { id: 'proposal-sha', text: job.proposal_sha }) : '—'],
    ...(job.partial_sha ? [['Partial work', el('code', { id: 'partial-sha', text: job.partial_sha })]] : []),
    ['Exec', job.exec ? el('code', { text: job.exec }) : '— (the model agent works on the task)'],
    ['Test command', job.test_command ? el('code', { text: job.test_command }) : '—'],
    ['Created', when(job.created_at)],
    ['Started', when(job.started_at)],
    ['Finished', when(job.finished_at)],
    ['Deadline', job.deadline ? dateTime(job.deadline) : '—'],
    ['Runner', job.runner_id || '—'],
    ['Container', job.container_id ? el('code', { text: job.container_id }) : '—'],
  ];
  if (job.mode === 'llm' || job.agent) {
    // The version is the runner's once started (what the image has), before that the one the images pin.
    rows.push(['Agent', el('span', { id: 'coding-agent', text: [job.agent ?? 'builtin', job.agent_version]
      .filter(Boolean).join(' ') })]);
    rows.push(['Instructions', el('span', { id: 'instructions', text: instructionsText() })]);
  }
  if (job.exec_model) {
    rows.push(['Model endpoint', el('span', { id: 'model-endpoint',
      text: 'given to the exec command (SPB_MODEL_BASE_URL), metered and budgeted like an agent\'s calls' })]);
  }
  if (job.mode === 'llm' || job.model || job.provider) {
    rows.push(['Model', [job.mode, job.provider ?? job.spend?.provider, job.model ?? job.spend?.model]
      .filter(Boolean).join(' · ')]);
  }
  if (job.spend) {
    const tokens = (n) => (typeof n === 'number' ? n.toLocaleString() : '?');
    rows.push(['Token spend', `${tokens(job.spend.input_tokens)} input · ${tokens(job.spend.output_tokens)} output`]);
  }
  if (job.detail) {
    rows.push(['Detail', job.detail]);
  }
  if (job.decision) {
    const d = job.decision;
    rows.push(['Decision', `${d.decision}${d.branch ? ` → ${d.branch}` : ''}${d.sha ? ` at ${shortSha(d.sha)}` : ''}`
      + ` by ${d.by ?? '?'}, ${dateTime(d.at)}`]);
  }
  return rows;
}

/**
 * Which standing instructions the agent ran with: the built-in agent is given the default branch's AGENTS.md by
 * blob id (job_created records it); a CLI agent reads whatever its checkout of the base has.
 */
function instructionsText() {
  if (job.agent && job.agent !== 'builtin') {
    return `the checkout's own (${job.agent} reads its instruction files from its checkout of the base)`;
  }
  return job.instructions_blob ? `AGENTS.md at ${shortSha(job.instructions_blob)} (default branch)`
    : 'none (no AGENTS.md on the default branch)';
}

function renderTestResult() {
  const out = $('test-result');
  out.className = '';
  if (job.test_result === 'passed' || job.test_result === 'failed') {
    out.replaceChildren(el('span', { class: `badge ${job.test_result}`, text: `tests ${job.test_result}` }), ' ',
      el('code', { text: job.test_command ?? '' }));
  } else if (!job.test_command) {
    out.className = 'muted';
    out.textContent = 'No test command was given for this job.';
  } else if (job.status !== 'finished') {
    out.className = 'muted';
    out.replaceChildren('The test command runs after the exec command: ', el('code', { text: job.test_command }));
  } else {
    out.className = 'muted';
    out.textContent = `No test result: the job ended (${job.exit_reason ?? 'unknown'}) before its tests could pass or fail.`;
  }
}

function renderAudit() {
  const hidden = new Set(['seq', 'ts', 'prev', 'event', 'hash', 'job']);
  const shown = ([k, v]) => !hidden.has(k) && v !== null && v !== '';
  $('audit').tBodies[0].replaceChildren(...audit.map((entry) => el('tr', { 'data-event': entry.event },
    el('td', { text: entry.seq ?? '' }),
    el('td', { text: dateTime(entry.ts) }),
    el('td', {}, el('code', { text: entry.event ?? '' })),
    el('td', { class: 'mono', text: Object.entries(entry).filter(shown)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join('\n') }))));
}

// ---- actions ----------------------------------------------------------------------------------------------

/** The job's refs, for the delete confirmation: what it wrote, less what was deleted since. */
function jobRefs() {
  const deleted = new Set(audit.filter((e) => e.event === 'refs_deleted').flatMap((e) => e.refs ?? []));
  const refs = [];
  for (const written of job.refs_written ?? []) {
    const zero = /^0+$/.test(written.new ?? '');
    if (!zero && !deleted.has(written.ref) && !refs.includes(written.ref)) {
      refs.push(written.ref);
    }
  }
  for (const [sha, ref] of [[job.partial_sha, 'partial'], [job.proposal_sha, 'proposal']]) {
    if (sha && !refs.includes(`refs/agents/${job.id}/${ref}`)) {
      refs.unshift(`refs/agents/${job.id}/${ref}`);
    }
  }
  return refs;
}

function renderActions() {
  const finished = job.status === 'finished';
  // Partial work is never approved: the button is not offered for it at all.
  buttons.approve.hidden = !job.proposal_sha && Boolean(job.partial_sha);
  buttons.approve.disabled = busy || !finished || !job.proposal_sha || Boolean(job.decision);
  buttons.reject.disabled = busy || !finished || Boolean(job.decision);
  buttons.cancel.hidden = finished;
  buttons.cancel.disabled = busy;
  buttons.deleteRefs.disabled = busy || !finished || jobRefs().length === 0;
  buttons.requestChanges.hidden = !canRequestChanges(job);
  buttons.requestChanges.disabled = busy;
  if (buttons.requestChanges.hidden) {
    revisionRequest.close();
  }
}

async function act(label, request, describe) {
  busy = true;
  renderActions();
  showError($('action-error'), '');
  $('action-message').hidden = true;
  try {
    const result = await request();
    $('action-message').textContent = describe(result);
    $('action-message').hidden = false;
  } catch (e) {
    showError($('action-error'), `${label} failed: ${e.message}`);
  } finally {
    busy = false;
    renderActions();
    await refresh();
  }
}

async function approve() {
  const sha = job.proposal_sha;
  const branch = await confirmDialog({
    title: 'Approve this proposal',
    message: `Fast-forward a branch of ${job.repo} to the reviewed proposal commit ${sha}. The branch is created if it does not exist; nothing else changes.`
      + (job.revises ? ` This is revision ${job.revision}: the branch gets every revision's changes up to it (All revisions).` : '')
      + (diff?.changes_environment ? ` Warning: ${$('environment-warning').textContent}.` : ''),
    input: { label: 'Branch', value: `agent/${job.id}` },
    confirmLabel: 'Approve',
  });
  if (!branch) {
    return;
  }
  await act('Approve', () => api('POST', `${jobPath}/approve`, { branch, sha }),
    (j) => `Approved: ${j.decision?.branch ?? branch} now points at ${shortSha(j.decision?.sha ?? sha)}.`);
}

async function reject() {
  const what = reviewedWork()?.kind === 'partial' ? 'partial work' : 'proposal';
  const ok = await confirmDialog({
    title: `Reject this ${what}`,
    message: `Record that the ${what} is rejected. No branch changes; the job's refs stay until you delete them.`,
    confirmLabel: 'Reject',
    danger: true,
  });
  if (ok !== null) {
    await act('Reject', () => api('POST', `${jobPath}/reject`), () => 'Rejected.');
  }
}

async function cancel() {
  const ok = await confirmDialog({
    title: 'Cancel this job',
    message: 'Stop the job: its container is stopped and it ends as cancelled.',
    confirmLabel: 'Cancel job',
    danger: true,
  });
  if (ok !== null) {
    await act('Cancel', () => api('POST', `${jobPath}/cancel`), () => 'Cancel requested.');
  }
}

async function deleteRefs() {
  const refs = jobRefs();
  const ok = await confirmDialog({
    title: 'Delete the job\'s refs',
    message: `These refs of ${job.repo} will be deleted (everything under refs/agents/${job.id}/). Branches are not touched. This cannot be undone.`,
    items: refs,
    confirmLabel: 'Delete refs',
    danger: true,
  });
  if (ok !== null) {
    await act('Delete refs', () => api('DELETE', `${jobPath}/refs`),
      (r) => (r.deleted?.length ? `Deleted ${r.deleted.join(', ')}.` : 'There were no refs left to delete.'));
  }
}

// ---- log --------------------------------------------------------------------------------------------------

function startLog() {
  const panel = $('log');
  const fullLog = `${jobPath}/log`;
  $('log-full').href = fullLog;
  const view = new LogView(panel, $('log-note'), fullLog);
  let sawOutput = false;
  const follower = new LogFollower(`${jobPath}/logs`, {
    onLog(frame) {
      view.append(frame.stream, frame.data);
      panel.dataset.lastSeq = frame.seq;
      if (!sawOutput && STATUS_ORDER.indexOf(job.status) < STATUS_ORDER.indexOf('started')) {
        sawOutput = true;
        refreshUntil('started');
      }
    },
    onStatus(status) {
      refreshUntil(status);
    },
    onEnd(frame) {
      panel.dataset.ended = 'true';
      $('log-state').textContent = `ended (${frame.exit_reason ?? 'finished'})`;
      refreshUntil('finished');
    },
    onGap(from, to) {
      view.appendNotice(`[log chunks ${from}–${to} are not available]`);
    },
    onState(text) {
      $('log-state').textContent = text;
    },
    onConnect(count) {
      panel.dataset.connects = count;
    },
  });
  const pause = $('log-pause');
  pause.addEventListener('click', () => {
    const paused = pause.getAttribute('aria-pressed') !== 'true';
    pause.setAttribute('aria-pressed', String(paused));
    pause.textContent = paused ? 'Resume following' : 'Pause';
    view.setPaused(paused);
  });
  follower.start();
}

function wireDiffToggle() {
  for (const mode of ['unified', 'split']) {
    $(`view-${mode}`).addEventListener('click', () => {
      diffMode = mode;
      $('view-unified').setAttribute('aria-pressed', String(mode === 'unified'));
      $('view-split').setAttribute('aria-pressed', String(mode === 'split'));
      if (diff) {
        renderDiff($('diff'), diff, diffMode);
        review.render();
      }
    });
  }
}

function wireScopeToggle() {
  for (const scope of ['revision', 'cumulative']) {
    $(`scope-${scope}`).addEventListener('click', async () => {
      diffScope = scope;
      renderScopeTools();
      await loadDiff();
      review.render();
    });
  }
}

function wireSummaryForm() {
  $('summary-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('summary-send').disabled = true;
    showError($('comment-error'), '');
    try {
      await review.add({ body: $('summary-text').value });
      $('summary-text').value = '';
    } catch (e) {
      showError($('comment-error'), `Comment failed: ${e.message}`);
    } finally {
      $('summary-send').disabled = false;
    }
  });
}

// ---- start ------------------------------------------------------------------------------------------------

await requireSession();
wireTopBar();
$('repo-link').textContent = repo;
$('repo-link').href = `/repos/${encodeURIComponent(repo)}/agent-jobs`;
$('job-id-crumb').textContent = id;
buttons.approve.addEventListener('click', approve);
buttons.reject.addEventListener('click', reject);
buttons.cancel.addEventListener('click', cancel);
buttons.deleteRefs.addEventListener('click', deleteRefs);
buttons.requestChanges.addEventListener('click', () => revisionRequest.open(job));
wireDiffToggle();
wireScopeToggle();
wireSummaryForm();
await refresh();
if (job) {
  startLog();
}
// The websocket's status frames drive refreshes; polling covers a socket that cannot connect.
setInterval(() => {
  if (job && job.status !== 'finished' && !busy) {
    refresh();
  }
}, POLL_MS);
