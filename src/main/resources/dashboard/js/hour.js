// The last hour by group: completions a minute and the queue's depth, from the 60 s stats series
// (GET /api/v1/stats?series=60s&group=…), as two small line charts per group, and the latency of its step attempts
// (the answer's latency: p50 and p99 over the hour). Read once a minute: a minute slot changes no faster.
import { $, text, cell, fillRows } from './dom.js';
import { api } from './api.js';

// the SVG namespace, read from the page's own chart (a namespace, not a site: the page names no other origin)
const NS = document.querySelector('#chart').namespaceURI;
const WIDTH = 180;
const HEIGHT = 32;
let lastRead = 0;

/** A line chart of values, scaled to its own highest, with the highest named in its title. */
function spark(values, what) {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + WIDTH + ' ' + HEIGHT);
  svg.setAttribute('class', 'spark');
  svg.setAttribute('role', 'img');
  const max = Math.max(1, ...values);
  svg.setAttribute('aria-label', what + ', highest ' + max);
  const title = document.createElementNS(NS, 'title');
  title.textContent = what + ' over the last hour, highest ' + max;
  svg.appendChild(title);
  const line = document.createElementNS(NS, 'polyline');
  const step = values.length > 1 ? WIDTH / (values.length - 1) : WIDTH;
  line.setAttribute('points', values.map((v, i) => (i * step).toFixed(1) + ',' + (HEIGHT - 2 - v / max * (HEIGHT - 4)).toFixed(1)).join(' '));
  line.setAttribute('fill', 'none');
  svg.appendChild(line);
  return svg;
}

/** A quantile of latency in ms as the bucket bound that holds it: '-' when no attempt ran, '> 2000000' in the open one. */
function ms(latency, q) {
  if (!latency || !latency.attempts) { return '-'; }
  return latency[q] === null ? '> 2000000' : String(latency[q]);
}

/** Draws each group's hour; groups is the cluster view's queues (every group a node serves or a pipeline names). */
export async function refreshHour(groups, force) {
  if (!force && Date.now() - lastRead < 60000) { return; }
  lastRead = Date.now();
  const names = Object.keys(groups).sort();
  const series = await Promise.all(names.map(g => api('GET', '/api/v1/stats?series=60s&group=' + encodeURIComponent(g))));
  fillRows('#hour', names.map((g, i) => [g, series[i].slots, series[i].latency]), 'hour-row', (tr, [g, slots, latency]) => {
    tr.dataset.group = g;
    const done = slots.map(s => Number(s.counters.completed || 0));
    const depth = slots.map(s => Number(s.counters['queue.in'] || 0));
    cell(tr, g);
    cell(tr, '').appendChild(spark(done, 'completed a minute'));
    cell(tr, done.reduce((a, b) => a + b, 0)).className = 'hour-completed';
    cell(tr, '').appendChild(spark(depth, 'queued'));
    cell(tr, Math.max(0, ...depth)).className = 'hour-depth';
    const attempts = latency && latency.attempts ? latency.attempts + ' step attempts' : 'no step attempt';
    for (const q of ['p50Ms', 'p99Ms']) {
      const td = cell(tr, ms(latency, q));
      td.className = 'hour-' + q.slice(0, 3);
      td.title = attempts + ' in the hour; the upper bound of the bucket holding the ' + q.slice(0, 3);
    }
  });
  text($('#hour-caption'), 'minute slots; updated ' + new Date().toLocaleTimeString());
}
