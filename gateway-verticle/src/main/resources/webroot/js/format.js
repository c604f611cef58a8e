// Small formatting helpers; everything the pages write into the DOM goes through textContent.

/** `tag` element with optional class, text and children; never parses markup. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (key === 'class') {
      node.className = value;
    } else if (key === 'text') {
      node.textContent = value;
    } else {
      node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child);
    }
  }
  return node;
}

/** "3 min ago" style age of an ISO timestamp (or epoch ms); empty for none. */
export function age(timestamp, now = Date.now()) {
  const ms = toMillis(timestamp);
  if (ms === null) {
    return '';
  }
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 60) {
    return `${seconds} s ago`;
  }
  if (seconds < 3600) {
    return `${Math.floor(seconds / 60)} min ago`;
  }
  if (seconds < 86400) {
    return `${Math.floor(seconds / 3600)} h ago`;
  }
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** Local date and time of an ISO timestamp (or epoch ms); the raw value if it does not parse. */
export function dateTime(timestamp) {
  const ms = toMillis(timestamp);
  return ms === null ? (timestamp ?? '') : new Date(ms).toLocaleString();
}

function toMillis(timestamp) {
  if (timestamp === null || timestamp === undefined || timestamp === '') {
    return null;
  }
  const ms = typeof timestamp === 'number' ? timestamp : Date.parse(timestamp);
  return Number.isNaN(ms) ? null : ms;
}

/** The badge for a job's status, coloured by outcome once finished. */
export function statusBadge(job) {
  let cls = `badge ${job.status}`;
  let text = job.status;
  if (job.status === 'finished') {
    cls += job.exit_reason === 'ok' ? ' ok' : ' fail';
    text = `finished: ${job.exit_reason ?? 'unknown'}`;
  }
  return el('span', { class: cls, text });
}

export function shortSha(sha) {
  return sha ? sha.slice(0, 12) : '';
}

/**
 * How pages name a job: its task, or for a revision the first job's task and the revision's number (a
 * revision's task is the first job's followed by each review, RevisionTask on the gateway).
 */
export function jobTitle(job) {
  if (job.revision > 1 && job.task) {
    return `${job.task.split('\n\n## Revision ')[0]} · revision ${job.revision}`;
  }
  return job.task || job.id;
}
