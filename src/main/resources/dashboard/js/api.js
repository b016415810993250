// The node's own API, with the admin key this browser keeps; nothing else is fetched.
const KEY = 'conveyorAdminKey';
let refused = () => {};

export function key() { return localStorage.getItem(KEY); }
export function keepKey(value) { localStorage.setItem(KEY, value); }
export function forgetKey() { localStorage.removeItem(KEY); }

/** What happens when the node refuses the key (the app shows the key form with why). */
export function onRefused(handler) { refused = handler; }

/** How long a read or an act may take before the page gives up on it and says so (a connection that hangs). */
const TIMEOUT_MS = 30000;

export async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    signal: AbortSignal.timeout(TIMEOUT_MS),
    headers: Object.assign({ 'Authorization': 'Bearer ' + key() },
      body === undefined ? {} : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (res.status === 401 || res.status === 403) {
    forgetKey();
    refused((json && json.detail) || 'the key was refused');
    throw new Error('unauthorized');
  }
  if (!res.ok) { throw new Error((json && (json.detail || json.title)) || res.statusText); }
  return json;
}

/** One transaction's admin detail (summary, steps, attempts, tree links, input, output, events). */
export function detail(txId) { return api('GET', '/api/v1/admin/transactions/' + encodeURIComponent(txId)); }
