// Checks of dashboard.mjs that hold on every view: text contrast (WCAG AA) against each text's effective background,
// every clickable thing a button or a link, and actions reachable by Tab.

/**
 * Every visible text of the page whose contrast against its effective background is below 4.5:1 (3:1 for large
 * text: 24 px, or 18.66 px bold): [{what, text, ratio, color, background}]. The background is the first opaque one up
 * the element's ancestors, with the translucent ones on the way composited over it (the canvas is white).
 */
export async function contrastOffenders(page) {
  return page.evaluate(() => {
    const parse = (c) => {
      const m = /rgba?\(([^)]+)\)/.exec(c || '');
      if (!m) { return null; }
      const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
      return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
    };
    const over = (top, bottom) => ({ r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
      b: top.b * top.a + bottom.b * (1 - top.a), a: 1 });
    const lum = (c) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    };
    const background = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) {
        const bg = parse(getComputedStyle(e).backgroundColor);
        if (bg && bg.a > 0) { layers.push(bg); if (bg.a >= 1) { break; } }
      }
      let c = { r: 255, g: 255, b: 255, a: 1 };
      for (let i = layers.length - 1; i >= 0; i--) { c = over(layers[i], c); }
      return c;
    };
    const hex = (c) => '#' + [c.r, c.g, c.b].map(v => Math.round(v).toString(16).padStart(2, '0')).join('');
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '');
    const out = [];
    let checked = 0;
    for (const el of document.querySelectorAll('body *')) {
      if (['SCRIPT', 'STYLE', 'OPTION', 'TEXTAREA', 'SELECT', 'TITLE'].includes(el.tagName) || el.closest('svg')) { continue; }
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      if (!own) { continue; }
      const style = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      if (style.visibility === 'hidden' || r.width <= 1 || r.height <= 1 || r.right <= 0 || el.getClientRects().length === 0) { continue; }
      if (el.closest('button:disabled, input:disabled, select:disabled, textarea:disabled')) { continue; } // WCAG exempts inactive controls
      const bg = background(el);
      const fg = over(parse(style.color), bg);
      const ratio = (Math.max(lum(fg), lum(bg)) + 0.05) / (Math.min(lum(fg), lum(bg)) + 0.05);
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      checked++;
      if (ratio < (large ? 3 : 4.5)) {
        out.push({ what: name(el), text: own.slice(0, 40), ratio: Math.round(ratio * 100) / 100, color: hex(fg), background: hex(bg) });
      }
    }
    return { checked, offenders: out.slice(0, 30) };
  });
}

/** Fails listing the offenders of the view (named by what) when any text is below its contrast. */
export async function checkContrast(page, what) {
  const found = await contrastOffenders(page);
  if (found.checked < 5) { throw new Error('contrast of ' + what + ': only ' + found.checked + ' texts found'); }
  if (found.offenders.length) {
    throw new Error('contrast below WCAG AA in ' + what + ': ' + JSON.stringify(found.offenders));
  }
  const clickable = await page.evaluate(() => [...document.querySelectorAll('body *')]
    .filter(e => getComputedStyle(e).cursor === 'pointer' && e.getClientRects().length > 0
      && !e.closest('a[href], button, summary, label, input, select, textarea'))
    .map(e => e.tagName + (e.id ? '#' + e.id : '')).slice(0, 10));
  if (clickable.length) { throw new Error('clickable but neither a button nor a link in ' + what + ': ' + clickable.join(', ')); }
  console.log('contrast ok in ' + what + ': ' + found.checked + ' texts');
}

/**
 * Focuses from (a selector), then presses Tab up to max times; fails unless each selector of targets got the focus
 * on the way (so the action is reachable by keyboard). Answers how many presses it took to reach them all.
 */
export async function tabReaches(page, from, targets, max = 150) {
  await page.focus(from);
  const left = new Set(targets);
  let presses = 0;
  while (left.size && presses < max) {
    await page.keyboard.press('Tab');
    presses++;
    for (const sel of [...left]) {
      if (await page.evaluate(s => document.activeElement && document.activeElement.matches(s), sel)) { left.delete(sel); }
    }
  }
  if (left.size) { throw new Error('not reached by Tab from ' + from + ' in ' + max + ' presses: ' + [...left].join(', ')); }
  return presses;
}
