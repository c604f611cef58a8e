// A best-of-N group's page, /repos/:name/agent-groups/:gid: its attempts side by side, as
// GET /api/v1/repos/:name/agent-groups/:gid lists them, each linking to its proposal page. Text only.
import { api, requireSession, showError, wireTopBar } from './api.js';
import { el, shortSha } from './format.js';

const REFRESH_MS = 5000;
const [, repoPart, groupPart] = location.pathname.match(/^\/repos\/([^/]+)\/agent-groups\/([^/]+)\/?$/);
const repo = decodeURIComponent(repoPart);
const group = decodeURIComponent(groupPart);
const apiPath = `/api/v1/repos/${encodeURIComponent(repo)}/agent-groups/${encodeURIComponent(group)}`;

async function refresh() {
  try {
    render(await api('GET', apiPath));
    showError(document.getElementById('page-error'), '');
  } catch (e) {
    showError(document.getElementById('page-error'), `Cannot load the group: ${e.message}`);
  }
}

function render(body) {
  document.getElementById('task').textContent = body.task;
  const tokens = (n) => (typeof n === 'number' ? n.toLocaleString() : '—');
  const rows = body.jobs.map((a) => el('tr', { 'data-job': a.id },
    el('td', {}, el('a', { href: a.proposal_page, text: a.id })),
    el('td', { text: a.status }),
    el('td', { class: 'exit-reason', text: a.exit_reason ?? '—' }),
    el('td', { text: a.test_result ?? '—' }),
    el('td', { class: 'diff-stat' }, ...diffStatText(a.diff_stat)),
    el('td', { text: `${tokens(a.input_tokens)} / ${tokens(a.output_tokens)}` }),
    el('td', { text: typeof a.duration_seconds === 'number' ? `${a.duration_seconds} s` : '—' }),
    el('td', {}, a.proposal_sha ? el('code', { text: shortSha(a.proposal_sha) }) : '—'),
    el('td', { class: 'decision', text: decisionText(a.decision) })));
  document.querySelector('#attempts tbody').replaceChildren(...rows);
}

/** "+A −D in N files", or a dash for an attempt that pushed nothing (or whose diff failed). */
function diffStatText(stat) {
  if (!stat) {
    return ['—'];
  }
  const parts = [
    el('span', { class: 'add-count', text: `+${stat.additions}` }), ' ',
    el('span', { class: 'del-count', text: `−${stat.deletions}` }),
    ` in ${stat.files} file${stat.files === 1 ? '' : 's'}`];
  if (stat.truncated) {
    // The diff behind the counts was cut short: they may fall short of the change.
    parts.push(el('span', { class: 'muted', text: ' (at least)', title: 'the diff was truncated' }));
  }
  return parts;
}

function decisionText(d) {
  if (!d) {
    return '—';
  }
  if (d.decision === 'approved') {
    return `approved → ${d.branch}`;
  }
  return d.decision === 'superseded' ? `superseded by ${d.superseded_by}` : d.decision;
}

await requireSession();
wireTopBar();
document.getElementById('group-crumb').textContent = group;
const repoLink = document.getElementById('repo-link');
repoLink.textContent = repo;
repoLink.href = `/repos/${encodeURIComponent(repo)}/agent-jobs`;
document.title = `Best-of-N group ${group} · ${repo} · SPB Git`;
await refresh();
setInterval(refresh, REFRESH_MS);
