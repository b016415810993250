// Small DOM helpers the dashboard's modules share.
export const $ = (sel) => document.querySelector(sel);

/** Sets el's text (null as empty) and returns el. */
export function text(el, value) { el.textContent = value == null ? '' : String(value); return el; }

/** A new element with the given class (or none) and text (or none). */
export function el(tag, className, value) {
  const e = document.createElement(tag);
  if (className) { e.className = className; }
  if (value != null) { text(e, value); }
  return e;
}

/** A link that opens a transaction's detail in place (its own address, #/tx/<txId>), shown as label or its txId. */
export function txLink(id, label) {
  const a = el('a', 'tx-link', label || id);
  a.href = '#/tx/' + id;
  a.dataset.tx = id;
  a.title = id;
  return a;
}

export function cell(row, value) { row.appendChild(text(document.createElement('td'), value)); return row.lastChild; }

/**
 * Fills the table's body: a row for each item (of class className, when given), as fill writes it. A row or cell
 * that reads the same as the one on screen is kept, not rebuilt: the page redraws every few seconds, and a button
 * rebuilt between a click's press and its release (or while it has the keyboard's focus) would lose the click.
 */
export function fillRows(table, items, className, fill) {
  const body = $(table + ' tbody');
  const old = [...body.children];
  items.forEach((item, i) => {
    const tr = document.createElement('tr');
    if (className) { tr.className = className; }
    fill(tr, item);
    if (i < old.length) { patchRow(old[i], tr); } else { body.appendChild(tr); }
  });
  old.slice(items.length).forEach(r => r.remove());
}

function attributes(e) { return [...e.attributes].map(a => a.name + '=' + a.value).join('\n'); }

/** Makes old read as tr: whole when its own attributes or cell count differ, else only the cells that differ. */
function patchRow(old, tr) {
  if (old.outerHTML === tr.outerHTML) { return; }
  const stale = [...old.children];
  const fresh = [...tr.children];
  if (stale.length !== fresh.length || attributes(old) !== attributes(tr)) {
    old.replaceWith(tr);
    return;
  }
  fresh.forEach((cell, i) => { if (cell.outerHTML !== stale[i].outerHTML) { old.replaceChild(cell, stale[i]); } });
}

/** A short txId for narrow cells: its first 15 characters and an ellipsis. */
export function shortTx(id) { return id.slice(0, 15) + '…'; }

/** Characters of JSON as a size a reader takes in at a glance. */
export function size(n) {
  return n == null ? '' : n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB';
}

/** A duration in ms as text: 340 ms, 2.5 s, 3.0 min, 1.2 h. */
export function duration(ms) {
  if (ms < 1000) { return Math.round(ms) + ' ms'; }
  if (ms < 60000) { return (ms / 1000).toFixed(1) + ' s'; }
  if (ms < 3600000) { return (ms / 60000).toFixed(1) + ' min'; }
  return (ms / 3600000).toFixed(1) + ' h';
}

/**
 * Latest wins, for a refresh that can overlap itself (the 3 s poll, a button's refresh, a pushed fact's): each call
 * takes a number as it starts, and what it read is drawn only when no call started after it was drawn first, so an
 * answer read before a pause never paints over the one read after it. mark's data-drawn and data-dropped count
 * the answers drawn and dropped.
 */
export function latestWins(mark) {
  let started = 0;
  let drawn = 0;
  return {
    begin() { return ++started; },
    draw(n) {
      if (n <= drawn) {
        mark().dataset.dropped = String(Number(mark().dataset.dropped || 0) + 1);
        return false;
      }
      drawn = n;
      mark().dataset.drawn = String(Number(mark().dataset.drawn || 0) + 1);
      return true;
    }
  };
}
