// Jobs list: /agent-jobs (every repository) or /repos/:name/agent-jobs (one repository, with a start form).
import { api, groupPagePath, jobPagePath, requireSession, showError, wireTopBar } from './api.js';
import { age, el, jobTitle, statusBadge } from './format.js';

const REFRESH_MS = 5000;
const match = location.pathname.match(/^\/repos\/([^/]+)\/agent-jobs\/?$/);
const repo = match ? decodeURIComponent(match[1]) : null;
const listPath = repo ? `/api/v1/repos/${encodeURIComponent(repo)}/agent-jobs` : '/api/v1/jobs';

const tbody = document.querySelector('#jobs tbody');
const listError = document.getElementById('list-error');

async function refresh() {
  try {
    const jobs = await api('GET', listPath);
    render(jobs);
    showError(listError, '');
  } catch (e) {
    showError(listError, `Cannot load jobs: ${e.message}`);
  }
}

function render(jobs) {
  const rows = jobs.map((job) => el('tr', { 'data-job': job.id },
    el('td', {}, statusBadge(job)),
    el('td', { title: job.created_at ?? '', text: age(job.created_at) }),
    el('td', { class: 'task' }, el('a', { href: jobPagePath(job.repo, job.id), text: jobTitle(job) })),
    el('td', {}, el('a', { href: `/repos/${encodeURIComponent(job.repo)}/agent-jobs`, text: job.repo })),
    el('td', { class: 'agent', text: agentOf(job) })));
  tbody.replaceChildren(...rows);
  document.getElementById('empty').hidden = jobs.length > 0;
}

/** An llm job's coding agent, an exec job's command (marked when it has the model endpoint). */
function agentOf(job) {
  if (job.mode === 'exec') {
    return job.exec_model ? 'exec + model endpoint' : 'exec';
  }
  return job.agent ?? 'builtin';
}

function wireStartForm() {
  const form = document.getElementById('start-form');
  const error = document.getElementById('start-error');
  form.hidden = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { task: form.task.value.trim() };
    if (!body.task) {
      showError(error, 'Describe the task.');
      return;
    }
    for (const name of ['exec', 'test_command', 'base', 'model', 'agent']) {
      if (form[name].value.trim()) {
        body[name] = form[name].value.trim();
      }
    }
    const attempts = Number(form.attempts.value);
    if (attempts > 1) {
      body.attempts = attempts;
    }
    form.querySelector('button[type=submit]').disabled = true;
    try {
      const job = await api('POST', listPath, body);
      // With attempts the answer is {group, jobs}: their comparison is the group's page.
      location.assign(job.group && Array.isArray(job.jobs)
        ? groupPagePath(repo, job.group) : jobPagePath(job.repo ?? repo, job.id));
    } catch (e) {
      showError(error, `Cannot start the job: ${e.message}`);
      form.querySelector('button[type=submit]').disabled = false;
    }
  });
}

await requireSession();
wireTopBar();
if (repo) {
  document.getElementById('title').textContent = `Agent jobs · ${repo}`;
  document.getElementById('subtitle').textContent = `Jobs of repository ${repo}, newest first.`;
  document.title = `Agent jobs · ${repo} · SPB Git`;
  wireStartForm();
}
await refresh();
setInterval(refresh, REFRESH_MS);
