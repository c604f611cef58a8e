// The session and the JSON API, shared by every page. The session cookie is HttpOnly: the page never sees
// it, only the CSRF token that GET /session hands out, which every state-changing request echoes.

let csrf = null;

/** An API answer with a 4xx/5xx status; `message` is the server's {"error": ...} text when it sent one. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Sends the browser to the login form, coming back here afterwards. Never resolves. */
export function goToLogin() {
  const next = location.pathname + location.search + location.hash;
  location.assign('/login?next=' + encodeURIComponent(next));
  return new Promise(() => {});
}

/** Loads the session (and its CSRF token), or goes to the login page when there is none. */
export async function requireSession() {
  const response = await fetch('/session', { credentials: 'same-origin', cache: 'no-store' });
  if (response.status === 401) {
    return goToLogin();
  }
  const body = await readBody(response);
  csrf = body.csrf;
  return body;
}

/**
 * Calls the API with the session cookie; resolves to the parsed JSON (or text for text/plain), rejects with
 * an ApiError carrying the server's message. A 401 means the session ended: back to the login page.
 */
export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') {
    headers['X-CSRF-Token'] = csrf ?? '';
  }
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (response.status === 401) {
    return goToLogin();
  }
  return readBody(response);
}

async function readBody(response) {
  const type = response.headers.get('Content-Type') ?? '';
  const text = await response.text();
  let json = null;
  if (type.includes('json') && text) {
    try {
      json = JSON.parse(text);
    } catch (e) {
      json = null;
    }
  }
  if (!response.ok) {
    const message = json && typeof json.error === 'string' ? json.error : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message);
  }
  return json ?? (type.includes('json') ? null : text);
}

export async function signOut() {
  try {
    await api('DELETE', '/session');
  } finally {
    location.assign('/login');
  }
}

/** Wires the top bar's "Sign out" button, present on every signed-in page. */
export function wireTopBar() {
  const button = document.getElementById('sign-out');
  if (button) {
    button.addEventListener('click', () => signOut());
  }
}

/** Path of a job's page and its API resource. */
export function jobPagePath(repo, id) {
  return `/repos/${encodeURIComponent(repo)}/agent-jobs/${encodeURIComponent(id)}`;
}

/** Path of a best-of-N group's page, comparing its attempts. */
export function groupPagePath(repo, group) {
  return `/repos/${encodeURIComponent(repo)}/agent-groups/${encodeURIComponent(group)}`;
}

export function jobApiPath(repo, id) {
  return `/api/v1/repos/${encodeURIComponent(repo)}/agent-jobs/${encodeURIComponent(id)}`;
}

/** Shows `message` in the element (an error box); hides it when the message is empty. */
export function showError(element, message) {
  element.textContent = message ?? '';
  element.hidden = !message;
}
