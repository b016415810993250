// What a sleeping transaction waits for (the admin detail's awaiting): a business event of its flow/await step, or a
// switch. For an event an admin may send it from here (a human approval): a payload, asked before it is sent over
// POST /api/v1/events for the transaction's owner; what it did is said in #action-result, and the detail is read
// again (a pushed completion redraws it too).
import { $, text, el } from './dom.js';
import { api } from './api.js';
import { ask } from './actions.js';

let formFor = null; // what the send form on screen is for: a redraw keeps what the operator typed into it

function when(iso) { return iso ? iso.replace('T', ' ').replace('Z', ' UTC') : 'no deadline'; }

/** One line saying what it waits for, from which step, until when and what happens then. */
export function describe(a) {
  const from = ' (step ' + a.step + ', ' + a.stepType + ')';
  if (a.kind === 'switch') {
    return 'Waits for switch "' + a.switch + '" to be set' + from + ', at the latest until ' + when(a.deadline) + '.';
  }
  return 'Waits for event "' + a.event + '" with key ' + (a.key != null ? '"' + a.key + '"' : '(none: ' + a.keyProblem + ')') +
    ' of owner ' + a.owner + from + ' until ' + when(a.deadline) + ' (timeout ' + a.timeout + ', then ' +
    (a.onTimeout === 'continue' ? 'it continues with its default' : 'it fails') + ').';
}

function labelled(label, control) {
  const l = el('label', null, label + ' ');
  l.appendChild(control);
  return l;
}

function sendForm(d, done) {
  const a = d.awaiting;
  const form = el('form', 'actions send-event');
  form.id = 'send-event';
  const payload = el('textarea');
  payload.id = 'event-payload';
  payload.rows = 2;
  payload.value = '{"approved": true}';
  const deliver = el('select');
  deliver.id = 'event-deliver';
  for (const [v, label] of [['all', 'every waiter of the key'], ['one', 'the first waiter only']]) {
    const o = el('option', null, label);
    o.value = v;
    deliver.appendChild(o);
  }
  const b = el('button', 'action', 'Send event…');
  b.type = 'submit';
  b.id = 'btn-send-event';
  form.append(labelled('payload (JSON)', payload), labelled('to', deliver), b);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let body;
    try {
      body = payload.value.trim() === '' ? {} : JSON.parse(payload.value);
    } catch (err) {
      text($('#action-result'), 'payload: not JSON (' + err.message + '); nothing sent');
      return;
    }
    const says = 'Send event "' + a.event + '" with key "' + a.key + '" for owner ' + a.owner + ', payload ' +
      JSON.stringify(body) + ', to ' + deliver.selectedOptions[0].textContent + '. A waiting flow/await step takes ' +
      'it and its transaction goes on; with no waiter it is kept for events.retention.';
    if (!(await ask(says))) { text($('#action-result'), 'Send event: not done'); return; }
    try {
      const sent = await api('POST', '/api/v1/events', { owner: a.owner, name: a.event, key: a.key, payload: body,
        deliver: deliver.value });
      text($('#action-result'), 'Sent event ' + sent.id + ': ' + sent.outcome + ', woke ' + sent.woken +
        ' transaction(s)' + (sent.duplicate ? ' (a resend)' : ''));
    } catch (err) {
      text($('#action-result'), 'Send event refused: ' + err.message);
    }
    done();
  });
  return form;
}

/** Shows d.awaiting in #detail-awaiting (hidden when it waits for nothing); done() re-reads the detail. */
export function renderAwaiting(d, done) {
  const box = $('#detail-awaiting');
  const a = d.awaiting;
  box.hidden = !a;
  if (!a) { formFor = null; box.replaceChildren(); return; }
  const name = $('#switch-name'); // the Set switch action's field, drawn anew with each render
  if (a.kind === 'switch' && name && !name.value) { name.value = a.switch; }
  const id = [d.summary.txId, a.kind, a.step, a.event, a.key, a.switch].join('|');
  const sendable = a.kind === 'event' && a.key != null;
  if (formFor === id && box.querySelector('#awaiting-what')) {
    text(box.querySelector('#awaiting-what'), describe(a));
    return;
  }
  formFor = id;
  const title = el('h3', null, a.kind === 'event' ? 'Awaits an event' : 'Awaits a switch');
  title.id = 'awaiting-title';
  const what = el('p', null, describe(a));
  what.id = 'awaiting-what';
  box.replaceChildren(title, what);
  box.dataset.kind = a.kind;
  if (sendable) {
    box.appendChild(sendForm(d, done));
  } else if (a.kind === 'switch') {
    box.appendChild(el('p', 'hint', 'Set it with "Set switch" above (its name is filled in).'));
  }
}
