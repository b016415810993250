// A pipeline drawn (#/pipeline/<name>): its steps top to bottom, what each starts beside it (a child pipeline,
// chosen by a field or fixed; a parallel step's branches or its forEach pipeline), its onFailure; each pipeline a
// link to its own drawing, and the pipeline's outcomes over the last hour (stats, per 60 s slot); under each step its
// attempts and p50/p99 durations over the last hour (GET …/versions/<version>: stepStats); then its versions.
import { $, text, el, duration } from './dom.js';
import { api } from './api.js';
import { renderVersions, openingVersions } from './versions.js';
import { renderRollout, forgetRollout } from './rollout.js';

function pipeLink(name, note) {
  const a = el('a', 'pipe-link', name);
  a.href = '#/pipeline/' + encodeURIComponent(name);
  a.dataset.pipeline = name;
  const box = el('span', 'graph-target');
  box.appendChild(a);
  if (note) { box.appendChild(el('small', null, ' ' + note)); }
  return box;
}

/** What a step starts: [{pipeline, note}] for child-pipeline and flow/parallel, else []. */
export function targets(step) {
  const p = step.params || {};
  if (step.type === 'util/child-pipeline') {
    if (p.pipeline) { return [{ pipeline: p.pipeline, note: 'child' }]; }
    const out = Object.entries(p.map || {}).map(([value, name]) => ({ pipeline: name, note: p.field + ' = ' + value }));
    if (p.default) { out.push({ pipeline: p.default, note: 'otherwise' }); }
    return out;
  }
  if (step.type === 'flow/parallel') {
    if (p.forEach) { return [{ pipeline: p.pipeline, note: 'for each of ' + p.forEach }]; }
    return (p.branches || []).map((b, i) => ({ pipeline: b.pipeline, note: 'branch ' + (i + 1) }));
  }
  return [];
}

function join(p) {
  if (p.atLeast) { return 'join: at least ' + p.atLeast; }
  return 'join: ' + (p.join || 'all') + (p.maxConcurrency ? ', ' + p.maxConcurrency + ' at once' : '') +
    (p.continueOnFailure ? ', continue on failure' : '');
}

function bound(ms) { return ms == null ? '> 33 min' : '≤ ' + duration(ms); }

/** "last hour: 12 attempts · p50 ≤ 5 ms · p99 ≤ 200 ms" (the buckets' upper bounds), or that none was timed. */
export function timing(s) {
  return 'last hour: ' + (!s ? 'no attempt timed' : s.attempts + (s.attempts === 1 ? ' attempt' : ' attempts') +
    ' · p50 ' + bound(s.p50Ms) + ' · p99 ' + bound(s.p99Ms));
}

function stepNode(step, i, def, stats) {
  const li = el('li', 'graph-step');
  li.dataset.step = i + 1;
  const box = el('div', 'graph-box');
  box.appendChild(el('strong', null, (i + 1) + ' · ' + step.type));
  const facts = [];
  const timeout = step.timeout || def.timeout;
  if (timeout) { facts.push('timeout ' + timeout); }
  if (step.retry || def.retry) { facts.push('retries: up to ' + ((step.retry || def.retry).maxAttempts || '?') + ' attempts'); }
  if (step.type === 'flow/parallel') { facts.push(join(step.params || {})); }
  if (facts.length) { box.appendChild(el('small', null, facts.join(' · '))); }
  if (stats) { box.appendChild(el('small', 'step-stats', timing(stats[String(i + 1)]))); }
  li.appendChild(box);
  const starts = targets(step);
  if (starts.length) {
    const row = el('div', 'graph-fan');
    starts.forEach(t => row.appendChild(pipeLink(t.pipeline, t.note)));
    li.appendChild(row);
  }
  return li;
}

function outcomes(stats) {
  const sum = {};
  stats.slots.forEach(s => Object.entries(s.counters).forEach(([k, v]) => {
    if (k === 'started' || k.startsWith('completed.')) { sum[k] = (sum[k] || 0) + v; }
  }));
  const parts = Object.entries(sum).sort().map(([k, v]) => k.replace('completed.', '') + ' ' + v);
  return 'Last hour: ' + (parts.length ? parts.join(', ') : 'nothing ran');
}

/**
 * A definition drawn: its steps (with their numbers when stats, {step: {attempts, p50Ms, p99Ms}}, is given), its end
 * and onFailure. mark(i), when given, says how step i differs from another version ('added', 'changed: …', …).
 */
export function drawSteps(def, stats, mark) {
  const list = el('ol', 'graph');
  (def.steps || []).forEach((s, i) => {
    const li = stepNode(s, i, def, stats);
    const m = mark && mark(i);
    if (m) {
      li.classList.add('diff-' + m.split(':')[0]);
      li.querySelector('.graph-box').appendChild(el('span', 'diff-badge', m));
    }
    list.appendChild(li);
  });
  const end = el('li', 'graph-end');
  end.appendChild(el('div', 'graph-box', 'ends: its last step\'s output is the output'));
  if (def.onFailure) {
    const fail = el('div', 'graph-fan');
    fail.appendChild(pipeLink(def.onFailure, 'on failure (compensation)'));
    end.appendChild(fail);
  }
  list.appendChild(end);
  return list;
}

let opening = 0; // each drawing takes the next number; one that a later drawing overtook stops drawing

export async function openPipeline(name) {
  const mine = ++opening;
  const latest = () => mine === opening;
  const view = $('#pipeline-view');
  view.dataset.pipeline = name;
  delete view.dataset.drawn;
  text($('#pipeline-title'), name);
  forgetRollout();
  openingVersions(name);
  const graph = $('#pipeline-graph');
  const path = '/api/v1/pipelines/' + encodeURIComponent(name);
  try {
    const [p, stats, versions] = await Promise.all([api('GET', path),
      api('GET', '/api/v1/stats?series=60s&pipeline=' + encodeURIComponent(name) + '&from=' +
        new Date(Date.now() - 3600000).toISOString()), api('GET', path + '/versions')]);
    // when the version's numbers cannot be read, its steps are still drawn (without them)
    const current = await api('GET', path + '/versions/' + p.version).catch(e => {
      if (e.message === 'unauthorized') { throw e; }
      return { stepStats: null };
    });
    if (!latest()) { return; }
    const def = p.definition || {};
    text($('#pipeline-facts'), 'group ' + p.nodeGroup + ' · version ' + p.version + (p.disabled ? ' · disabled' : '') +
      (p.transactionType ? ' · startable' : ' · started only as a child or branch') +
      (def.description ? ' · ' + def.description : ''));
    text($('#pipeline-stats'), outcomes(stats));
    graph.replaceChildren(drawSteps(def, current.stepStats));
    renderVersions(name, versions);
    await renderRollout(name, latest, () => { if (view.dataset.pipeline === name) { openPipeline(name); } });
    if (!latest()) { return; }
    view.dataset.drawn = name;
  } catch (e) {
    if (latest() && e.message !== 'unauthorized') { graph.replaceChildren(el('p', 'error', 'not drawn: ' + e.message)); }
  }
}
