// canlab window: talks to the REST API and the window's private /ui/ API of the server that
// served it. The token comes from the URL fragment (#token=...), which browsers never send to the
// server, so GET / can stay public without the page carrying the token.
'use strict';

(function () {
  const TOKEN_KEY = 'canlab-token';
  const FRAME_ROWS = 50;
  // Detectors rerun on every frames change; while recording, refresh their list at most this often.
  const INTEL_REFRESH_MS = 5000;

  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('token') || sessionStorage.getItem(TOKEN_KEY) || '';
  if (fragment.get('token')) {
    sessionStorage.setItem(TOKEN_KEY, token);
    // Keep the token out of the address bar and history once it is read.
    history.replaceState(null, '', location.pathname);
  }

  const $ = (id) => document.getElementById(id);
  let state = null;

  function notice(text) {
    const el = $('notice');
    el.textContent = text || '';
    el.hidden = !text;
  }

  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: Object.assign(
        { 'X-API-Token': token },
        body === undefined ? {} : { 'Content-Type': 'application/json' },
      ),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(json.message || `${method} ${path}: HTTP ${res.status}`);
    return json;
  }

  /** Runs an action, showing its refusal (the server's message) instead of failing silently. */
  async function attempt(action) {
    try {
      await action();
      notice('');
    } catch (err) {
      notice(err.message);
    }
  }

  function cell(row, text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function fillTable(tbodyId, items, render) {
    const body = $(tbodyId);
    const rows = items.map((item) => {
      const tr = document.createElement('tr');
      render(tr, item);
      return tr;
    });
    body.replaceChildren(...rows);
  }

  function fmt(x, digits) {
    return x === null || x === undefined ? '–' : Number(x).toFixed(digits);
  }

  async function refreshState() {
    state = await api('GET', '/ui/state');
    const s = state.status;
    $('status').textContent =
      `${s.connection}${s.source ? ` · ${s.source}` : ''} · ${s.frameCount} frames · ${s.idCount} ids · ${s.signalCount} signals · ${s.markCount} marks${s.openMarks.length ? ` (open: ${s.openMarks.join(', ')})` : ''}`;
    const arm = $('arm-tx');
    arm.checked = s.armTx;
    arm.parentElement.classList.toggle('on', s.armTx);
    $('undo').disabled = state.history.undo === 0;
    $('redo').disabled = state.history.redo === 0;
    const last = state.history.lastUndo;
    $('history').textContent = last ? `last step: ${last.kind} ${last.signal.name} (${last.source})` : '';
    $('inject-panel').hidden = !state.injectRoute;
    $('inject-send').disabled = !(s.armTx && state.transmitter);
    $('inject-note').textContent = !state.transmitter
      ? 'No adapter that can transmit is attached.'
      : s.armTx
        ? 'ARM TX is on: Send puts the frame on the bus.'
        : 'Arm TX to send.';
    await refreshSignals();
  }

  async function refreshSignals() {
    const { signals: decoded } = await api('GET', '/signals');
    const byKey = new Map(decoded.map((d) => [`${d.messageId}/${d.name}`, d]));
    fillTable('signals-body', state.signals, (tr, s) => {
      const d = byKey.get(`${s.messageId}/${s.name}`);
      tr.dataset.signal = s.name;
      cell(tr, s.messageId, 'mono');
      cell(tr, s.name);
      cell(
        tr,
        `${s.startBit}|${s.length}@${s.byteOrder === 'little_endian' ? '1' : '0'}${s.signed ? '-' : '+'}`,
        'mono',
      );
      cell(tr, `(${s.factor},${s.offset}) ${s.unit}`);
      cell(tr, d && d.value !== null ? `${d.label ?? d.value} ${s.unit}` : '–');
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = 'Remove';
      remove.addEventListener('click', () =>
        attempt(() => api('POST', '/ui/signals/remove', { messageId: s.messageId, name: s.name })),
      );
      cell(tr, '').appendChild(remove);
    });
  }

  async function refreshFrames() {
    const { frames, total } = await api('GET', `/frames?n=${FRAME_ROWS}`);
    $('frames-count').textContent = `latest ${frames.length} of ${total}`;
    fillTable('frames-body', frames.slice().reverse(), (tr, f) => {
      cell(tr, fmt(f.timestamp, 6));
      cell(tr, String(f.channel));
      cell(tr, f.id, 'mono');
      cell(tr, String(f.dlc));
      cell(tr, f.error ? 'error frame' : f.remote ? 'remote' : f.data, 'mono');
    });
  }

  async function refreshIds() {
    const { ids } = await api('GET', '/ui/ids');
    fillTable('ids-body', ids, (tr, s) => {
      cell(tr, s.id, 'mono');
      cell(tr, String(s.count));
      cell(tr, fmt(s.rateHz, 1));
      cell(tr, fmt(s.jitterMs, 2));
      cell(tr, s.dlcs.join(','));
      cell(tr, s.movingBytes.join(','));
    });
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(name, attrs, text) {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  }

  // The time axis of the last drawing, so a click on the timeline can be read back as a time.
  let axis = null;

  async function refreshTimeline() {
    const { start, end, marks } = await api('GET', '/ui/timeline');
    const times = marks.flatMap((m) => [m.start, m.end ?? m.start]);
    const lo = Math.min(start ?? Infinity, ...times);
    const hi = Math.max(end ?? -Infinity, ...times);
    const root = $('timeline');
    // One drawing unit per CSS pixel, so labels are not stretched with the panel.
    const width = root.clientWidth || 1000;
    root.setAttribute('viewBox', `0 0 ${width} 120`);
    const children = [svg('line', { class: 'axis', x1: 0, y1: 110, x2: width, y2: 110 })];
    if (Number.isFinite(lo)) {
      const span = hi > lo ? hi - lo : 1;
      axis = { lo, span, width };
      const x = (t) => ((t - lo) / span) * (width - 20) + 10;
      const lanes = [...new Set(marks.map((m) => m.label))];
      for (const m of marks) {
        const y = 8 + (lanes.indexOf(m.label) % 6) * 16;
        if (m.kind === 'point') {
          children.push(
            svg('line', {
              class: 'point',
              x1: x(m.start),
              y1: y,
              x2: x(m.start),
              y2: y + 14,
              'data-label': m.label,
            }),
          );
        } else {
          const x2 = x(m.end ?? hi);
          children.push(
            svg('rect', {
              class: m.end === undefined ? 'interval open' : 'interval',
              x: x(m.start),
              y,
              width: Math.max(x2 - x(m.start), 2),
              height: 14,
              'data-label': m.label,
            }),
          );
        }
        // Labels near the right edge are written leftwards so they stay inside the drawing.
        const right = x(m.start) > width - 100;
        children.push(
          svg(
            'text',
            { x: x(m.start) + (right ? -4 : 4), y: y + 11, 'text-anchor': right ? 'end' : 'start' },
            m.label,
          ),
        );
      }
      $('timeline-span').textContent = `${fmt(lo, 3)} s – ${fmt(hi, 3)} s · ${marks.length} marks`;
    } else {
      $('timeline-span').textContent = 'no frames or marks yet';
    }
    root.replaceChildren(...children);
  }

  let intelAt = 0;
  async function refreshIntel() {
    intelAt = Date.now();
    const { items } = await api('GET', '/ui/intelligence');
    const list = $('intel');
    list.replaceChildren(
      ...items.slice(0, 300).map((item) => {
        const li = document.createElement('li');
        const kind = document.createElement('span');
        kind.className = `kind ${item.kind}`;
        kind.textContent = item.kind;
        li.append(kind, item.title);
        li.title = item.at;
        return li;
      }),
    );
  }

  async function refreshAll() {
    await Promise.all([refreshState(), refreshFrames(), refreshIds(), refreshTimeline(), refreshIntel()]);
  }

  function formValues(form) {
    return Object.fromEntries(new FormData(form).entries());
  }

  $('load-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void attempt(() => api('POST', '/ui/load', { path: $('load-path').value.trim() }));
  });

  $('signal-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = formValues(e.target);
    void attempt(() =>
      api('POST', '/ui/signals', {
        messageId: v.messageId.trim(),
        name: v.name.trim(),
        startBit: Number(v.startBit),
        length: Number(v.length),
        byteOrder: v.byteOrder,
        signed: v.signed === 'on',
        factor: Number(v.factor || 1),
        offset: Number(v.offset || 0),
        unit: v.unit,
      }),
    );
  });

  $('undo').addEventListener('click', () => attempt(() => api('POST', '/ui/undo')));
  $('redo').addEventListener('click', () => attempt(() => api('POST', '/ui/redo')));
  $('arm-tx').addEventListener('change', (e) =>
    attempt(() => api('POST', '/ui/arm-tx', { on: e.target.checked }).finally(refreshState)),
  );

  $('mark-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = formValues(e.target);
    const mark = { label: v.label.trim(), action: v.action };
    if (v.at !== '') mark.at = Number(v.at);
    void attempt(() => api('POST', '/ui/mark', mark));
  });

  $('timeline').addEventListener('click', (e) => {
    if (!axis) return;
    const box = e.currentTarget.getBoundingClientRect();
    const t =
      axis.lo + ((((e.clientX - box.left) / box.width) * axis.width - 10) / (axis.width - 20)) * axis.span;
    $('mark-form').elements.at.value = t.toFixed(3);
  });

  window.addEventListener('resize', () => void attempt(refreshTimeline));

  $('inject-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = formValues(e.target);
    void attempt(() => api('POST', '/inject', { id: v.id.trim(), data: v.data }));
  });

  function listen() {
    const events = new EventSource(`/ui/events?token=${encodeURIComponent(token)}`);
    const on = (type, fn) => events.addEventListener(type, () => void attempt(fn));
    on('loaded', refreshAll);
    on('frames', async () => {
      await Promise.all([refreshState(), refreshFrames(), refreshIds(), refreshTimeline()]);
      if (Date.now() - intelAt > INTEL_REFRESH_MS) await refreshIntel();
    });
    on('signals', refreshState);
    on('mark', () => Promise.all([refreshState(), refreshTimeline(), refreshIntel()]));
    on('armTx', refreshState);
  }

  if (!token) {
    notice('No session token: open the URL that `canlab window` printed (it ends in #token=...).');
    return;
  }
  void attempt(refreshAll);
  listen();
})();
