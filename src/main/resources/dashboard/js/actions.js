// What an operator may do to one transaction: only what applies to its state, each saying what it will do and
// asking before it does it.
import { $, text, el } from './dom.js';
import { api } from './api.js';

const RERUNNABLE = ['failed', 'cancelled', 'timeout', 'internal-error'];

/** Asks in the page's dialog; resolves true when the operator says do it. */
export function ask(message) {
  const dialog = $('#confirm');
  text($('#confirm-text'), message);
  return new Promise(resolve => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

/** The actions that apply: [{name, label, says, method, suffix, body?}]; none once it succeeded or was aborted. */
export function applicable(d) {
  const s = d.summary;
  const out = [];
  if (RERUNNABLE.includes(s.status)) {
    const failed = d.steps.find(x => x.state === 'ended');
    const at = failed ? 'step ' + failed.step + ' (' + failed.type + ')' : 'the step where it ended';
    out.push({ name: 'retry', label: 'Retry ' + (failed ? 'from step ' + failed.step + ', where it ended' : 'where it ended'), method: 'POST',
      suffix: '/retry', says: 'Run it again from ' + at + ', with the input that step had; the steps before it do ' +
        'not run again. The run that ended ' + s.status + ' is kept in its history' +
        (d.archived ? '; it is brought back from the archive.' : '.') });
    out.push({ name: 'retry-start', label: 'Run again from the start', method: 'POST', suffix: '/retry?from=start',
      says: 'Run it again from step 1 with its original input; every step runs again. The run that ended ' +
        s.status + ' is kept in its history.' });
    return out;
  }
  if (s.status !== 'running') { return out; }
  const children = d.child || (d.branches && d.branches.length);
  if (s.paused) {
    out.push({ name: 'resume', label: 'Resume', method: 'POST', suffix: '/resume',
      says: 'Let it go on where it stood' + (children ? ', with the paused children and branches it waits for' : '') +
        '; a timer that fell due while it was paused fires at once.' });
  } else {
    out.push({ name: 'pause', label: 'Pause', method: 'POST', suffix: '/pause',
      says: (s.processingState === 'processing' ? 'Stop it at its next step boundary: its running step finishes'
        : 'Hold it where it stands') + (children ? ', with the children and branches it waits for' : '') +
        '; it holds no worker or slot until resumed.' });
  }
  out.push({ name: 'cancel', label: 'Cancel', method: 'POST', suffix: '/cancel',
    says: (s.processingState === 'processing' ? 'Ask it to stop: it ends cancelled at its next step boundary'
      : 'End it cancelled now') + (children ? ', with the children and branches it waits for' : '') +
      '; a pipeline with onFailure then runs its compensation.' });
  if (s.processingState === 'sleeping') {
    out.push({ name: 'wake', label: 'Wake', method: 'POST', suffix: '/wake',
      says: 'Wake it now: ' + (s.retry ? 'its next retry attempt runs at once instead of at ' +
        (s.retry.nextAttemptAt || 'its due time') : 'it leaves its sleep and runs on') +
        ' (at the reaper leader\'s next round).' });
  }
  out.push({ name: 'switch', label: 'Set switch', method: 'PUT', switch: true,
    says: 'Set the switch on this transaction; if it sleeps waiting on that switch it wakes at once.' });
  return out;
}

function switchBody() {
  const name = $('#switch-name').value.trim();
  let value;
  try { value = JSON.parse($('#switch-value').value); } catch (e) { value = $('#switch-value').value; }
  return { name, value };
}

/** Renders the buttons for d into #detail-actions; done(summary or error) runs after an action. */
export function renderActions(d, done) {
  const box = $('#detail-actions');
  box.replaceChildren();
  const list = applicable(d);
  if (list.length === 0) {
    box.appendChild(el('span', 'hint', 'No action applies: it ended ' + d.summary.status + '.'));
    return;
  }
  for (const a of list) {
    if (a.switch) {
      const name = el('input');
      name.id = 'switch-name';
      name.placeholder = 'switch name';
      name.setAttribute('aria-label', 'switch name');
      const value = el('input');
      value.id = 'switch-value';
      value.placeholder = 'value (JSON, e.g. true)';
      value.setAttribute('aria-label', 'switch value (JSON)');
      box.append(name, value);
    }
    const b = el('button', 'action', a.label);
    b.id = 'btn-' + a.name;
    b.title = a.says;
    b.addEventListener('click', async () => {
      const body = a.switch ? switchBody() : undefined;
      if (a.switch && !body.name) { text($('#action-result'), 'give the switch a name first'); return; }
      const says = a.switch ? 'Set switch "' + body.name + '" to ' + JSON.stringify(body.value) + '. ' + a.says : a.says;
      if (!(await ask(a.label + ': ' + says))) { text($('#action-result'), a.label + ': not done'); return; }
      const path = '/api/v1/admin/transactions/' + d.summary.txId +
        (a.switch ? '/switches/' + encodeURIComponent(body.name) : a.suffix);
      try {
        const s = await api(a.method, path, a.switch ? { value: body.value } : undefined);
        text($('#action-result'), a.label + ': now ' + s.status + ' / ' + s.processingState +
          (s.paused ? ' (paused)' : ''));
      } catch (e) {
        text($('#action-result'), a.label + ' refused: ' + e.message);
      }
      done();
    });
    box.appendChild(b);
  }
}
