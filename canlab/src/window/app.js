// canlab window: talks to the REST API and the window's private /ui/ API of the server that
// served it. The token comes from the URL fragment (#token=...), which browsers never send to the
// server, so GET / can stay public without the page carrying the token.
'use strict';

(function () {
  const TOKEN_KEY = 'canlab-token';
  const FRAME_ROWS = 50;
  // Detectors rerun on every frames change; while recording, refresh their list at most this often.
  const INTEL_REFRESH_MS = 5000;
  // While recording, plots and the heatmap rescan the capture at most this often.
  const LIVE_PLOT_REFRESH_MS = 1000;
  let liveAt = 0;

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

  async function send(method, path, contentType, body) {
    const res = await fetch(path, {
      method,
      headers: Object.assign({ 'X-API-Token': token }, contentType ? { 'Content-Type': contentType } : {}),
      body,
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(json.message || `${method} ${path}: HTTP ${res.status}`);
    return json;
  }

  function api(method, path, body) {
    return body === undefined
      ? send(method, path)
      : send(method, path, 'application/json', JSON.stringify(body));
  }

  /**
   * `fn` run so that calls while it runs fold into one more run after it: a DBC load defines a
   * signal per SSE event, and the page must not refetch its state once per signal.
   */
  function coalesced(fn) {
    let running = null;
    let again = false;
    return function run() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        try {
          do {
            again = false;
            await fn();
          } while (again);
        } finally {
          running = null;
        }
      })();
      return running;
    };
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
    const dbc = state.dbc;
    $('dbc-status').textContent = dbc
      ? `${dbc.file}: ${dbc.signals} signals from ${dbc.messages} messages${dbc.skipped.length ? `, ${dbc.skipped.length} skipped` : ''}`
      : '';
    $('dbc-status').title = dbc
      ? dbc.skipped.map((x) => `${x.message}.${x.signal}: ${x.reason}`).join('\n')
      : '';
    fillPlotChoices();
    $('inject-panel').hidden = !state.injectRoute;
    $('inject-send').disabled = !(s.armTx && state.transmitter);
    $('inject-note').textContent = !state.transmitter
      ? 'No adapter that can transmit is attached.'
      : s.armTx
        ? 'ARM TX is on: Send puts the frame on the bus.'
        : 'Arm TX to send.';
    await refreshSignals();
  }

  const refreshStateSoon = coalesced(refreshState);

  async function refreshSignals() {
    const { signals: decoded } = await api('GET', '/signals');
    const byKey = new Map(decoded.map((d) => [`${d.messageId}/${d.name}`, d]));
    fillTable('signals-body', state.signals, (tr, s) => {
      const d = byKey.get(`${s.messageId}/${s.name}`);
      tr.dataset.signal = s.name;
      cell(tr, messageLabel(s.messageId));
      cell(tr, s.name);
      cell(
        tr,
        `${s.startBit}|${s.length}@${s.byteOrder === 'little_endian' ? '1' : '0'}${s.signed ? '-' : '+'}`,
        'mono',
      );
      cell(tr, `(${s.factor},${s.offset}) ${s.unit}`);
      cell(tr, d && d.value !== null ? `${d.label ?? fmtValue(d.value)} ${s.unit}` : '–');
      const actions = cell(tr, '');
      actions.append(
        button('Plot', () => addLane(definedLane(s))),
        button('Remove', () =>
          attempt(() => api('POST', '/ui/signals/remove', { messageId: s.messageId, name: s.name })),
        ),
      );
    });
  }

  function button(text, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.addEventListener('click', onClick);
    return b;
  }

  /** `0x217 TRACK_A_7` once a DBC named the message, else the id alone. */
  function messageLabel(messageId) {
    const name = state && state.dbc && state.dbc.messageNames[messageId];
    return name ? `${messageId} ${name}` : messageId;
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
      tr.className = 'pick';
      tr.title = 'show its bit changes';
      tr.addEventListener('click', () => void attempt(() => selectHeatmap(s.id, s.id.length > 5)));
      cell(tr, s.id, 'mono');
      cell(tr, String(s.count));
      cell(tr, fmt(s.rateHz, 1));
      cell(tr, fmt(s.jitterMs, 2));
      cell(tr, s.dlcs.join(','));
      cell(tr, s.movingBytes.join(','));
    });
    fillHeatmapChoices(ids);
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
    timeAxisChanged(start, end, marks);
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
  /** Title of the finding last clicked, kept selected across refreshes of the list. */
  let shownFinding = null;
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
        if (item.kind === 'finding') {
          li.className = 'pick';
          li.title = `${item.at} · click: ${PLOTTED_KINDS.has(item.detail.kind) ? 'plot it and ' : ''}show its bits`;
          li.classList.toggle('selected', item.title === shownFinding);
          li.addEventListener('click', () => void attempt(() => showFinding(item)));
        }
        return li;
      }),
    );
  }

  // ---- Plot: stacked lanes of decoded or candidate signals on one time axis ----

  // Canvas needs colours as values; they come from the stylesheet so the page has one palette. Read
  // once each: a style lookup per stroke would recompute the page's style on every redraw.
  const colors = new Map();
  function css(name) {
    if (!colors.has(name))
      colors.set(name, getComputedStyle(document.documentElement).getPropertyValue(name).trim());
    return colors.get(name);
  }
  const LANE_HEIGHT = 120;
  // Plot area inside each lane canvas (CSS pixels): the left gutter holds the value labels.
  const PAD = { left: 64, right: 12, top: 8, bottom: 8 };
  const LANE_COLORS = ['--plot-1', '--plot-2', '--plot-3', '--plot-4', '--plot-5', '--plot-6'];
  // Finding kinds that read as a value over time; counters and checksums show in the heatmap.
  const PLOTTED_KINDS = new Set(['field', 'flag', 'value_table', 'multiplexer']);
  // Zooming stops at a millisecond across: CAN frames are rarely closer than that.
  const MIN_SPAN_S = 0.001;

  const plot = {
    lanes: [],
    /** The capture's first and last frame times, and its marks (from /ui/timeline). */
    full: null,
    marks: [],
    view: null,
    /** False until the analyst zooms or pans: the view then follows the capture as it grows. */
    zoomed: false,
    cursorX: null,
    drag: null,
    /** Width of the lanes in CSS pixels, measured once per drawing rather than once per sample. */
    cssWidth: 0,
  };
  let laneCount = 0;

  function plotWidth() {
    return Math.max(10, plot.cssWidth - PAD.left - PAD.right);
  }
  function xOf(t) {
    return PAD.left + ((t - plot.view.t0) / (plot.view.t1 - plot.view.t0)) * plotWidth();
  }
  function tOf(x) {
    return plot.view.t0 + ((x - PAD.left) / plotWidth()) * (plot.view.t1 - plot.view.t0);
  }

  /** Tick positions at a 1-2-5 step, about `count` of them across [lo, hi]. */
  function ticks(lo, hi, count) {
    const raw = (hi - lo) / count;
    const unit = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * unit).find((s) => s >= raw);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return { values: out, step };
  }

  function decimals(step) {
    return Math.max(0, Math.min(6, -Math.floor(Math.log10(step))));
  }

  /** A value as written in a readout: at most four decimals, no float noise (86.46, not 86.46000000000001). */
  function fmtValue(v) {
    return String(Number(v.toFixed(4)));
  }

  function definedLane(s) {
    const name = state && state.dbc && state.dbc.messageNames[s.messageId];
    return {
      key: `defined/${s.messageId}/${s.name}`,
      title: `${name || s.messageId}.${s.name}`,
      query: new URLSearchParams({ messageId: s.messageId, extended: String(s.extended), name: s.name }),
    };
  }

  /** A detector candidate decoded as the detector read it (offset 0, factor 1). */
  function candidateLane(messageId, extended, field, signed, title) {
    return {
      key: `candidate/${messageId}/${field.startBit}/${field.length}/${field.byteOrder}/${signed}`,
      title,
      query: new URLSearchParams({
        messageId,
        extended: String(extended),
        startBit: String(field.startBit),
        length: String(field.length),
        byteOrder: field.byteOrder,
        signed: String(signed),
      }),
    };
  }

  function addLane(spec) {
    const existing = plot.lanes.find((l) => l.key === spec.key);
    if (existing) {
      existing.el.scrollIntoView({ block: 'nearest' });
      return;
    }
    const color = LANE_COLORS[laneCount++ % LANE_COLORS.length];
    const el = document.createElement('div');
    el.className = 'lane';
    el.dataset.key = spec.key;
    const head = document.createElement('div');
    head.className = 'lane-head';
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.setProperty('background', `var(${color})`);
    const title = document.createElement('b');
    title.textContent = spec.title;
    const unit = document.createElement('span');
    unit.className = 'muted';
    const value = document.createElement('span');
    value.className = 'readout';
    const info = document.createElement('span');
    info.className = 'muted info';
    const canvas = document.createElement('canvas');
    canvas.dataset.testid = 'lane';
    const lane = {
      ...spec,
      color,
      el,
      canvas,
      readout: value,
      info,
      unitEl: unit,
      data: null,
      error: '',
      y: null,
      gen: 0,
      unit: '',
    };
    const close = button('×', () => {
      plot.lanes.splice(plot.lanes.indexOf(lane), 1);
      el.remove();
      drawPlot();
    });
    close.className = 'remove';
    close.title = 'remove this lane';
    head.append(swatch, title, unit, value, info, close);
    el.append(head, canvas);
    $('lanes').append(el);
    plot.lanes.push(lane);
    drawPlot();
    void attempt(() => fetchLane(lane));
  }

  /** The samples of one lane for the current view, min/max-decimated per pixel column by the server. */
  async function fetchLane(lane) {
    if (!plot.view) return;
    const view = plot.view;
    const gen = ++lane.gen;
    lane.canvas.dataset.pending = 'true';
    const q = new URLSearchParams(lane.query);
    q.set('from', String(view.t0));
    q.set('to', String(view.t1));
    q.set('width', String(Math.round(plotWidth())));
    try {
      const data = await api('GET', `/ui/series?${q}`);
      if (gen !== lane.gen) return;
      lane.data = data;
      lane.unit = data.unit;
      lane.unitEl.textContent = data.unit ? `[${data.unit}]` : '';
      lane.error = '';
      lane.y = valueRange(data, view);
    } catch (err) {
      if (gen !== lane.gen) return;
      lane.data = null;
      lane.error = err.message;
    }
    if (view === plot.view) lane.canvas.dataset.pending = 'false';
    drawLane(lane);
  }

  /** The lane's y-scale: the values inside the view, with a margin; a constant gets a unit either side. */
  function valueRange(data, view) {
    let lo = Infinity;
    let hi = -Infinity;
    data.t.forEach((t, i) => {
      if (t < view.t0 || t > view.t1) return;
      lo = Math.min(lo, data.v[i]);
      hi = Math.max(hi, data.v[i]);
    });
    // Only the samples either side of an empty view: scale to them.
    if (lo > hi) for (const v of data.v) ((lo = Math.min(lo, v)), (hi = Math.max(hi, v)));
    if (lo > hi) return { lo: 0, hi: 1 };
    if (lo === hi) return { lo: lo - 1, hi: hi + 1 };
    const margin = (hi - lo) * 0.08;
    return { lo: lo - margin, hi: hi + margin };
  }

  let fetchTimer = 0;
  /** After the view moves, each lane asks for its samples once the wheel or drag has settled for a frame. */
  function fetchLanes() {
    if (!plot.view) return;
    for (const lane of plot.lanes) lane.canvas.dataset.pending = 'true';
    cancelAnimationFrame(fetchTimer);
    fetchTimer = requestAnimationFrame(() => void attempt(() => Promise.all(plot.lanes.map(fetchLane))));
  }

  async function refreshLanes() {
    await Promise.all(plot.lanes.map(fetchLane));
  }

  const refreshDefinedLanes = coalesced(() =>
    Promise.all(plot.lanes.filter((l) => l.key.startsWith('defined/')).map(fetchLane)),
  );

  function timeAxisChanged(start, end, marks) {
    plot.marks = marks;
    if (start === null) {
      plot.full = null;
      plot.view = null;
    } else {
      plot.full = { t0: start, t1: end > start ? end : start + 1 };
      if (!plot.zoomed || !plot.view) plot.view = { ...plot.full };
    }
    drawPlot();
  }

  /** Moves the view, kept inside the capture and at least MIN_SPAN_S wide, and fetches its samples. */
  function setView(t0, t1) {
    const full = plot.full;
    const span = Math.min(Math.max(t1 - t0, MIN_SPAN_S), full.t1 - full.t0);
    const start = Math.min(Math.max(t0, full.t0), full.t1 - span);
    plot.view = { t0: start, t1: start + span };
    plot.zoomed = start > full.t0 || start + span < full.t1;
    drawSoon();
    fetchLanes();
  }

  let drawQueued = false;
  /** Redraws at the next frame, once however many pointer events arrive before it. */
  function drawSoon() {
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      drawPlot();
    });
  }

  function drawPlot() {
    plot.cssWidth = $('lanes').clientWidth;
    $('plot-empty').hidden = plot.lanes.length > 0;
    $('plot-axis').hidden = plot.lanes.length === 0;
    for (const lane of plot.lanes) drawLane(lane);
    drawAxis();
    const v = plot.view;
    $('plot-span').textContent = v
      ? `${fmt(v.t0 - plot.full.t0, 3)} – ${fmt(v.t1 - plot.full.t0, 3)} s of ${fmt(plot.full.t1 - plot.full.t0, 3)} s` +
        ` (0 s = ${fmt(plot.full.t0, 3)} in the capture's time base)`
      : 'no frames';
  }

  /** A cleared 2D context in CSS pixels; the backing store follows the device pixel ratio. */
  function sizeCanvas(canvas, height) {
    const dpr = window.devicePixelRatio || 1;
    const width = plot.cssWidth;
    if (canvas.width !== Math.round(width * dpr)) canvas.width = Math.round(width * dpr);
    if (canvas.height !== Math.round(height * dpr)) canvas.height = Math.round(height * dpr);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    return { ctx, width };
  }

  function drawMarks(ctx, top, bottom) {
    for (const m of plot.marks) {
      const x1 = xOf(m.start);
      if (m.kind === 'point') {
        ctx.strokeStyle = css('--warn');
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.moveTo(Math.round(x1) + 0.5, top);
        ctx.lineTo(Math.round(x1) + 0.5, bottom);
        ctx.stroke();
      } else {
        ctx.fillStyle = css('--mark-band');
        ctx.fillRect(x1, top, Math.max(xOf(m.end ?? plot.full.t1) - x1, 2), bottom - top);
      }
    }
  }

  function drawLane(lane) {
    const { ctx, width } = sizeCanvas(lane.canvas, LANE_HEIGHT);
    const top = PAD.top;
    const bottom = LANE_HEIGHT - PAD.bottom;
    const right = width - PAD.right;
    ctx.fillStyle = css('--plot-bg');
    ctx.fillRect(PAD.left, top, right - PAD.left, bottom - top);
    lane.info.textContent = lane.error || '';
    if (!plot.view || !lane.data || !lane.y) return;
    const { lo, hi } = lane.y;
    const yOf = (v) => bottom - ((v - lo) / (hi - lo)) * (bottom - top);

    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.lineWidth = 1;
    const yTicks = ticks(lo, hi, 3);
    for (const v of yTicks.values) {
      const y = Math.round(yOf(v)) + 0.5;
      ctx.strokeStyle = css('--grid');
      ctx.beginPath();
      ctx.moveTo(PAD.left, y);
      ctx.lineTo(right, y);
      ctx.stroke();
      ctx.fillStyle = css('--muted');
      ctx.fillText(v.toFixed(decimals(yTicks.step)), PAD.left - 6, y);
    }
    for (const t of ticks(plot.view.t0, plot.view.t1, 8).values) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.strokeStyle = css('--grid');
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
    }

    ctx.save();
    ctx.beginPath();
    ctx.rect(PAD.left, top, right - PAD.left, bottom - top);
    ctx.clip();
    drawMarks(ctx, top, bottom);
    const { t, v } = lane.data;
    ctx.strokeStyle = ctx.fillStyle = css(lane.color);
    ctx.lineWidth = 1.5;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    t.forEach((time, i) => (i ? ctx.lineTo(xOf(time), yOf(v[i])) : ctx.moveTo(xOf(time), yOf(v[i]))));
    ctx.stroke();
    // Far apart samples get dots, so the analyst sees where the frames are.
    if (t.length > 1 && plotWidth() / t.length > 8)
      t.forEach((time, i) => ctx.fillRect(xOf(time) - 1.5, yOf(v[i]) - 1.5, 3, 3));
    if (plot.cursorX !== null) {
      ctx.strokeStyle = css('--cursor');
      ctx.lineWidth = 1;
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(Math.round(plot.cursorX) + 0.5, top);
      ctx.lineTo(Math.round(plot.cursorX) + 0.5, bottom);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.restore();
    ctx.strokeStyle = css('--line');
    ctx.strokeRect(PAD.left + 0.5, top + 0.5, right - PAD.left - 1, bottom - top - 1);

    const c = lane.canvas.dataset;
    Object.assign(c, {
      t0: plot.view.t0,
      t1: plot.view.t1,
      y0: lo,
      y1: hi,
      left: PAD.left,
      top,
      width: right - PAD.left,
      height: bottom - top,
      color: css(lane.color),
      points: t.length,
      inView: lane.data.inView,
      decimated: lane.data.decimated,
    });
    const unit = lane.unit ? ` ${lane.unit}` : '';
    lane.info.textContent = `${lane.data.inView} samples in view${lane.data.decimated ? ', min/max per pixel' : ''}`;
    if (plot.cursorX === null) {
      lane.readout.textContent = '';
      delete c.cursorT;
    } else {
      c.cursorT = tOf(plot.cursorX);
      lane.readout.textContent = cursorReadout(lane, Number(c.cursorT), unit);
    }
  }

  /** The value at the cursor: the latest sample at or before it, or the range a decimated pixel holds. */
  function cursorReadout(lane, time, unit) {
    const { t, v } = lane.data;
    let i = -1;
    for (let lo = 0, hi = t.length - 1; lo <= hi;) {
      const mid = (lo + hi) >> 1;
      if (t[mid] <= time) ((i = mid), (lo = mid + 1));
      else hi = mid - 1;
    }
    const at = `at ${fmt(time - plot.full.t0, 3)} s`;
    if (i < 0) return `– ${at}`;
    if (lane.data.decimated) {
      const half = (plot.view.t1 - plot.view.t0) / plotWidth() / 2;
      const inPixel = v.filter((_, k) => Math.abs(t[k] - time) <= half);
      const lo = Math.min(...inPixel);
      const hi = Math.max(...inPixel);
      if (inPixel.length > 1 && lo !== hi) return `${fmtValue(lo)} … ${fmtValue(hi)}${unit} ${at}`;
    }
    return `${fmtValue(v[i])}${unit} ${at}`;
  }

  function drawAxis() {
    const canvas = $('plot-axis');
    if (!plot.view || canvas.hidden) return;
    const { ctx, width } = sizeCanvas(canvas, 34);
    const origin = plot.full.t0;
    const tk = ticks(plot.view.t0 - origin, plot.view.t1 - origin, Math.max(2, Math.floor(plotWidth() / 90)));
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.textAlign = 'center';
    ctx.strokeStyle = css('--line');
    ctx.beginPath();
    ctx.moveTo(PAD.left, 0.5);
    ctx.lineTo(width - PAD.right, 0.5);
    ctx.stroke();
    for (const rel of tk.values) {
      const x = Math.round(xOf(rel + origin)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, 5);
      ctx.stroke();
      ctx.fillStyle = css('--muted');
      ctx.fillText(`${rel.toFixed(decimals(tk.step))} s`, x, 7);
    }
    ctx.textAlign = 'left';
    for (const m of plot.marks) {
      const x = xOf(m.start);
      if (x < PAD.left || x > width - PAD.right) continue;
      // Coloured as the lanes draw them: points as lines, intervals as bands.
      ctx.fillStyle = css(m.kind === 'point' ? '--warn' : '--mark');
      ctx.fillRect(x - 0.5, 18, 1.5, 14);
      ctx.fillText(m.label, x + 3, 20);
    }
  }

  function fillPlotChoices() {
    const select = $('plot-signal');
    const chosen = select.value;
    select.replaceChildren(
      ...state.signals.map((s, i) => {
        const o = document.createElement('option');
        o.value = String(i);
        o.textContent = `${messageLabel(s.messageId)} · ${s.name}${s.unit ? ` (${s.unit})` : ''}`;
        return o;
      }),
    );
    if (chosen !== '' && Number(chosen) < state.signals.length) select.value = chosen;
    $('plot-add').disabled = state.signals.length === 0;
  }

  const lanes = $('lanes');
  lanes.addEventListener(
    'wheel',
    (e) => {
      if (!plot.view) return;
      e.preventDefault();
      const x = e.clientX - lanes.getBoundingClientRect().left;
      const at = tOf(x);
      const factor = Math.exp(e.deltaY * 0.002);
      setView(at - (at - plot.view.t0) * factor, at + (plot.view.t1 - at) * factor);
    },
    { passive: false },
  );
  lanes.addEventListener('pointerdown', (e) => {
    if (!plot.view || e.button !== 0 || e.target.tagName !== 'CANVAS') return;
    plot.drag = { x: e.clientX, view: plot.view };
    lanes.setPointerCapture(e.pointerId);
    lanes.classList.add('dragging');
  });
  lanes.addEventListener('pointermove', (e) => {
    if (!plot.view) return;
    if (plot.drag) {
      const { x, view } = plot.drag;
      const dt = ((e.clientX - x) / plotWidth()) * (view.t1 - view.t0);
      setView(view.t0 - dt, view.t1 - dt);
    }
    const x = e.clientX - lanes.getBoundingClientRect().left;
    plot.cursorX = x >= PAD.left && x <= PAD.left + plotWidth() ? x : null;
    drawSoon();
  });
  const endDrag = () => {
    plot.drag = null;
    lanes.classList.remove('dragging');
  };
  lanes.addEventListener('pointerup', endDrag);
  lanes.addEventListener('pointercancel', endDrag);
  lanes.addEventListener('pointerleave', () => {
    plot.cursorX = null;
    drawSoon();
  });
  const wholeCapture = () => plot.full && setView(plot.full.t0, plot.full.t1);
  lanes.addEventListener('dblclick', wholeCapture);
  $('plot-reset').addEventListener('click', wholeCapture);
  $('plot-add').addEventListener('click', () => {
    const s = state.signals[Number($('plot-signal').value)];
    if (s) addLane(definedLane(s));
  });

  // ---- Bit-change heatmap of one id ----

  const heat = { messageId: null, extended: false, highlight: null };
  // Sequential ramp for flip rates (sqrt scale, so rare flips still show), light to dark.
  const HEAT_STOPS = [
    [0, [255, 247, 237]],
    [0.35, [253, 186, 116]],
    [0.6, [249, 115, 22]],
    [0.8, [194, 65, 12]],
    [1, [124, 45, 18]],
  ];
  const SIGNAL_COLORS = [
    '--plot-1',
    '--plot-3',
    '--plot-5',
    '--plot-4',
    '--plot-6',
    '--plot-7',
    '--plot-8',
    '--plot-2',
  ];

  function heatColor(rate) {
    const x = Math.sqrt(rate);
    const k = HEAT_STOPS.findIndex(([at]) => at >= x);
    const [a, ca] = HEAT_STOPS[Math.max(0, k - 1)];
    const [b, cb] = HEAT_STOPS[k];
    const f = b === a ? 0 : (x - a) / (b - a);
    return { rgb: `rgb(${ca.map((c, i) => Math.round(c + (cb[i] - c) * f)).join(',')})`, dark: x > 0.62 };
  }

  function fillHeatmapChoices(ids) {
    const select = $('heatmap-id');
    select.replaceChildren(
      ...ids.map((s) => {
        const o = document.createElement('option');
        o.value = s.id;
        o.textContent = `${messageLabel(s.id)} · ${s.count} frames`;
        return o;
      }),
    );
    if (heat.messageId === null && ids.length > 0) {
      heat.messageId = ids[0].id;
      heat.extended = ids[0].id.length > 5;
      void attempt(refreshHeatmap);
    }
    select.value = heat.messageId ?? '';
  }

  async function selectHeatmap(messageId, extended, highlight) {
    heat.messageId = messageId;
    heat.extended = extended;
    heat.highlight = highlight ?? null;
    $('heatmap-id').value = messageId;
    await refreshHeatmap();
  }

  const refreshHeatmap = coalesced(async () => {
    if (heat.messageId === null) return;
    const m = await api(
      'GET',
      `/ui/heatmap?${new URLSearchParams({ messageId: heat.messageId, extended: String(heat.extended) })}`,
    );
    if (m.messageId !== heat.messageId) return;
    drawHeatmap(m);
  });

  function drawHeatmap(m) {
    const owner = new Map();
    m.signals.forEach((s, i) => s.bits.forEach((bit) => owner.set(bit, { name: s.name, i })));
    const marked = new Set(heat.highlight ? heat.highlight.bits : []);
    $('heatmap-caption').textContent = `${messageLabel(m.messageId)} · ${m.frames} frames, ${m.length} bytes`;
    $('heatmap-highlight').textContent = heat.highlight ? `outlined: ${heat.highlight.label}` : '';
    const head = document.createElement('tr');
    head.append(document.createElement('th'));
    for (let k = 7; k >= 0; k--) {
      const th = document.createElement('th');
      th.textContent = `bit ${k}`;
      head.append(th);
    }
    const rows = [head];
    for (let byte = 0; byte < m.length; byte++) {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      th.textContent = `byte ${byte}`;
      tr.append(th);
      for (let k = 7; k >= 0; k--) {
        const bit = byte * 8 + k;
        const flip = m.flipRate[bit];
        const set = m.setRate[bit];
        const td = document.createElement('td');
        const { rgb, dark } = heatColor(flip);
        td.style.setProperty('background', flip > 0 ? rgb : css('--constant'));
        td.classList.toggle('dark', dark);
        td.classList.toggle('hl', marked.has(bit));
        const sig = owner.get(bit);
        if (sig) td.style.setProperty('--owner', `var(${SIGNAL_COLORS[sig.i % SIGNAL_COLORS.length]})`);
        td.classList.toggle('owned', Boolean(sig));
        Object.assign(td.dataset, { bit, flipRate: flip, setRate: set });
        const label = document.createElement('span');
        label.className = 'bit';
        label.textContent = String(bit);
        const rate = document.createElement('span');
        rate.className = 'rate';
        rate.textContent = flip === 0 ? '·' : flip < 0.005 ? '<1%' : `${Math.round(flip * 100)}%`;
        td.append(label, rate);
        const text =
          `bit ${bit} (byte ${byte}, bit ${k})${sig ? ` · ${sig.name}` : ''} · ` +
          `flips in ${fmt(flip * 100, 1)}% of ${m.bytePairs[byte]} frame pairs · ` +
          `set in ${fmt(set * 100, 1)}% of ${m.byteFrames[byte]} frames`;
        td.title = text;
        td.addEventListener('mouseenter', () => ($('heatmap-readout').textContent = text));
        tr.append(td);
      }
      rows.push(tr);
    }
    $('heatmap').replaceChildren(...rows);
    $('heatmap-legend').replaceChildren(
      ...m.signals.map((s, i) => {
        const item = document.createElement('span');
        const swatch = document.createElement('span');
        swatch.className = 'swatch';
        swatch.style.setProperty('background', `var(${SIGNAL_COLORS[i % SIGNAL_COLORS.length]})`);
        item.append(swatch, s.name);
        return item;
      }),
    );
  }

  $('heatmap-scale').append(
    'flip rate',
    ...[0, 0.01, 0.05, 0.1, 0.25, 0.5, 1].map((rate) => {
      const chip = document.createElement('span');
      chip.className = `chip${heatColor(rate).dark ? ' dark' : ''}`;
      chip.style.setProperty('background', rate > 0 ? heatColor(rate).rgb : css('--constant'));
      chip.textContent = rate > 0 ? `${rate * 100}%` : 'never';
      return chip;
    }),
  );

  $('heatmap-id').addEventListener('change', (e) =>
    attempt(() => selectHeatmap(e.target.value, e.target.value.length > 5)),
  );

  /** `0x217` or `0x18DAF110x` (the detectors' spelling of an extended id) as the REST id and flag. */
  function findingId(key) {
    const extended = key.endsWith('x');
    return { messageId: extended ? key.slice(0, -1) : key, extended };
  }

  function showFinding(item) {
    shownFinding = item.title;
    for (const li of $('intel').children)
      li.classList.toggle('selected', li.textContent.endsWith(item.title));
    const d = item.detail;
    const { messageId, extended } = findingId(d.id);
    if (PLOTTED_KINDS.has(d.kind)) {
      const where = `${d.field.byteOrder === 'big_endian' ? 'BE' : 'LE'} ${d.field.startBit}|${d.field.length}`;
      addLane(
        candidateLane(
          messageId,
          extended,
          d.field,
          d.kind === 'field' && d.signed,
          `${messageLabel(messageId)} ${d.kind.replace('_', ' ')} ${where}`,
        ),
      );
    }
    return selectHeatmap(messageId, extended, { bits: item.bits ?? [], label: item.title });
  }

  // ---- Loading a DBC from the window (file picker or drop) ----

  async function loadDbc(file) {
    const bytes = await file.arrayBuffer();
    await send(
      'POST',
      `/ui/dbc?${new URLSearchParams({ name: file.name })}`,
      'application/octet-stream',
      bytes,
    );
    await refreshState();
  }

  $('dbc-file').addEventListener('change', (e) => {
    const file = e.target.files[0];
    e.target.value = '';
    if (file) void attempt(() => loadDbc(file));
  });
  const carriesFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  document.addEventListener('dragover', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    $('drop-overlay').hidden = false;
  });
  document.addEventListener('dragleave', (e) => {
    if (e.relatedTarget === null) $('drop-overlay').hidden = true;
  });
  document.addEventListener('drop', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    $('drop-overlay').hidden = true;
    const file = e.dataTransfer.files[0];
    if (file) void attempt(() => loadDbc(file));
  });

  async function refreshAll() {
    await Promise.all([refreshState(), refreshFrames(), refreshIds(), refreshTimeline(), refreshIntel()]);
    await Promise.all([refreshLanes(), refreshHeatmap()]);
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

  window.addEventListener('resize', () => {
    void attempt(refreshTimeline);
    drawPlot();
    fetchLanes();
  });

  $('inject-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = formValues(e.target);
    void attempt(() => api('POST', '/inject', { id: v.id.trim(), data: v.data }));
  });

  function listen() {
    const events = new EventSource(`/ui/events?token=${encodeURIComponent(token)}`);
    const on = (type, fn) => events.addEventListener(type, () => void attempt(fn));
    on('loaded', () => {
      plot.zoomed = false;
      return refreshAll();
    });
    on('frames', async () => {
      await Promise.all([refreshState(), refreshFrames(), refreshIds(), refreshTimeline()]);
      if (Date.now() - intelAt > INTEL_REFRESH_MS) await refreshIntel();
      if (Date.now() - liveAt > LIVE_PLOT_REFRESH_MS) {
        liveAt = Date.now();
        await Promise.all([refreshLanes(), refreshHeatmap()]);
      }
    });
    on('signals', () => Promise.all([refreshStateSoon(), refreshDefinedLanes(), refreshHeatmap()]));
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
