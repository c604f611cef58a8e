// The login form: trades the owner's PAT for a session cookie, then returns to the page that sent us here.
import { showError } from './api.js';

const form = document.getElementById('login-form');
const tokenInput = document.getElementById('token');
const error = document.getElementById('login-error');
const button = document.getElementById('sign-in');

/** The `next` parameter if it is a path on this site; anything else (another origin, "//host") is ignored. */
function nextPath() {
  const next = new URLSearchParams(location.search).get('next');
  if (!next) {
    return '/agent-jobs';
  }
  try {
    const url = new URL(next, location.origin);
    if (url.origin === location.origin && next.startsWith('/') && !next.startsWith('//')) {
      return url.pathname + url.search + url.hash;
    }
  } catch (e) {
    // not a URL: fall through to the default
  }
  return '/agent-jobs';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (!token) {
    showError(error, 'Enter a personal access token.');
    return;
  }
  button.disabled = true;
  showError(error, '');
  try {
    const response = await fetch('/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ token }),
      credentials: 'same-origin',
    });
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        message = (await response.json()).error ?? message;
      } catch (e) {
        // not JSON: keep the status line
      }
      throw new Error(message);
    }
    tokenInput.value = '';
    location.assign(nextPath());
  } catch (e) {
    showError(error, `Sign-in failed: ${e.message}`);
    button.disabled = false;
  }
});
