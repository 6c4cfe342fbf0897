// The console page: one static document that follows `events` (SSE snapshots of the board) and
// posts to `api/instruct`, `api/withdraw`, `api/edit`, `api/move`, `api/promote`, `api/hold`, `api/respond` and `api/cancel` on the console process, which
// sends through the relay.
// Everything from the stream is inserted as text, never as markup: event fields are untrusted.
// Keys: j / k move between sessions, i focuses the instruction box, Ctrl+Enter (or Cmd+Enter)
// sends, Escape leaves a field.
import { PAGE_SCRIPT_COMMON } from '../inspect/page-script.js';
import { RELAY_MARKS, headerStart, pageHead } from '../inspect/page-head.js';

export const CONSOLE_HTML = `${pageHead('aep-steer console')}
<meta name="referrer" content="no-referrer">
<meta name="theme-color" content="#2f6fdb">
<link rel="manifest" href="manifest.webmanifest">
<link rel="icon" href="icon-192.png">
<link rel="apple-touch-icon" href="icon-192.png">
<style>
  :root { font-family: system-ui, sans-serif; color: #1d232a; background: #f5f6f8; --line: #d8dce2; --muted: #59626d; }
  * { box-sizing: border-box; }
  body { margin: 0; }
  header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; padding: 12px 16px; background: #fff; border-bottom: 1px solid var(--line); }
  h1 { font-size: 18px; margin: 0; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  h3 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
  .relay { font-size: 13px; color: var(--muted); overflow-wrap: anywhere; }
${RELAY_MARKS}
  .keys { font-size: 12px; color: var(--muted); margin-left: auto; }
  main { display: grid; grid-template-columns: minmax(240px, 340px) 1fr; gap: 16px; padding: 16px; align-items: start; }
  @media (max-width: 720px) { main { grid-template-columns: 1fr; padding: 10px; } .keys { display: none; } }
  nav ul { list-style: none; margin: 0; padding: 0; display: grid; gap: 6px; }
  nav button { width: 100%; text-align: left; padding: 10px 12px; border: 1px solid var(--line); border-radius: 8px; background: #fff; font: inherit; cursor: pointer; min-height: 44px; }
  nav button[aria-current="true"] { border-color: #2f6fdb; box-shadow: 0 0 0 2px #2f6fdb33; }
  nav button:focus-visible, button:focus-visible, textarea:focus-visible, input:focus-visible { outline: 3px solid #2f6fdb; outline-offset: 1px; }
  .sid { font-family: ui-monospace, monospace; font-size: 12px; overflow-wrap: anywhere; display: block; }
  .line { font-size: 12px; color: var(--muted); display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-top: 4px; }
  .state { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #e3e7ec; color: #1d232a; }
  .state[data-state="queued"] { background: #ffe7a8; }
  .state[data-state^="holding"] { background: #ffd0c2; }
  .state[data-state="ended"] { background: #cfd5dc; color: var(--muted); }
  .badge { background: #c2352b; color: #fff; border-radius: 10px; padding: 0 7px; font-weight: 600; }
  section.panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px; min-width: 0; }
  textarea { width: 100%; min-height: 84px; font: inherit; padding: 8px; border: 1px solid var(--line); border-radius: 6px; resize: vertical; }
  select, input[type="number"] { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; min-width: 0; max-width: 100%; }
  input[type="checkbox"] { width: 20px; height: 20px; }
  [data-field="form"] label { justify-content: space-between; font-size: 14px; }
  input[type="text"] { font: inherit; padding: 8px; border: 1px solid var(--line); border-radius: 6px; flex: 1 1 160px; min-width: 0; }
  button.act { font: inherit; padding: 8px 14px; min-height: 40px; border-radius: 6px; border: 1px solid #2f6fdb; background: #2f6fdb; color: #fff; cursor: pointer; }
  button.act.secondary { background: #fff; color: #2f6fdb; }
  button.act.deny { background: #fff; color: #b02a20; border-color: #b02a20; }
  button.act:disabled { opacity: .5; cursor: default; }
  .row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 8px; }
  .status { font-size: 14px; margin-top: 8px; min-height: 1.4em; overflow-wrap: anywhere; }
  .status[data-status="delivered"] { color: #1e7a3c; }
  .status[data-status="dropped"], .status[data-status="rejected"], .status[data-status="error"] { color: #b02a20; }
  .status[data-status="pending"] { color: #93650a; }
  .request { border: 1px solid #f0b3a3; background: #fff6f3; border-radius: 8px; padding: 10px; margin-top: 8px; }
  .request p { margin: 0 0 4px; overflow-wrap: anywhere; }
  ol.queue { margin: 0; padding-left: 20px; font-size: 13px; }
  ol.queue li { overflow-wrap: anywhere; }
  ol.queue li { margin-bottom: 4px; } ol.queue textarea { width: 100%; box-sizing: border-box; }
  .muted { color: var(--muted); font-size: 13px; }
  #waiting { padding: 10px 16px 0; }
  #waiting ul { list-style: none; margin: 0; padding: 0; display: grid; gap: 6px; }
  #waiting button { width: 100%; text-align: left; padding: 10px 12px; border: 1px solid #f0b3a3; border-radius: 8px; background: #fff6f3; font: inherit; cursor: pointer; min-height: 44px; overflow-wrap: anywhere; }
  .table { overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: 5px 6px; border-bottom: 1px solid #e6e9ed; vertical-align: top; }
  td.id { font-family: ui-monospace, monospace; font-size: 12px; overflow-wrap: anywhere; }
  td[data-status="delivered"] { color: #1e7a3c; }
  td[data-status="dropped"], td[data-status="rejected"] { color: #b02a20; }
  td[data-status="pending"], td[data-status="unacknowledged"] { color: #93650a; }
</style>
</head>
<body>
${headerStart('aep-steer console')}
  <span class="keys">j/k session · i instruct · Ctrl+Enter send · Esc leave field</span>
</header>
<section id="waiting" aria-label="Waiting for you"><h2 data-field="waiting-title">Waiting for you: none</h2><ul id="waiting-list"></ul></section>
<main>
  <nav aria-label="Sessions"><h2>Sessions</h2><ul id="sessions"><li class="muted">no sessions yet</li></ul></nav>
  <section class="panel" id="detail" aria-live="polite"><p class="muted">Pick a session.</p></section>
</main>
<script>
(function () {
  'use strict';
  var snap = null;
  var selected = decodeURIComponent((location.hash.match(/session=([^&]+)/) || [])[1] || '');
  var lastCommand = {};   // session -> the command id this page sent last
  var lastNote = {};      // session -> the sentence the console answered with
  var queueNote = {};     // session -> the sentence a queue action was answered with
  var editing = {};       // instruction -> its text being edited in place, kept across redraws
  var stopNote = {};      // session -> the sentence a Stop was answered with
  var drafts = {};        // session -> unsent text, kept across redraws
  var formDrafts = {};    // request -> form values entered so far

${PAGE_SCRIPT_COMMON}  function clock(t) { return t ? t.slice(11, 23) : ''; }
  function post(action, body) {
    return fetch('api/' + action, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json(); })
      .catch(function (e) { return { error: true, message: 'The console process did not answer: ' + e.message }; });
  }
  // D46: who decided, and through what.
  function who(b) { return b.identity + ' via ' + b.surface + (b.device ? ' (' + b.device + ')' : ''); }
  // D48: a risky request says why; an allow of it needs two identities.
  function riskyNote(h) {
    if (!h.risky) return null;
    var why = 'Risky (' + h.risky.rule + (h.risky.why ? ': ' + h.risky.why : '') + '). ';
    return el('p', { class: 'risky', 'data-field': 'risky' }, [why + (h.firstBy ? 'Needs a second approver: the first allow is by ' + who(h.firstBy) + '.' : 'An allow needs two approvers; a deny settles it at once.')]);
  }
  function lifecycle(i) {
    if (i.status === 'delivered') {
      var d = i.delivered || {};
      // D43: an instruction that began the agent's turn says so, with the turn's id.
      if (d.started) return 'started a turn' + (d.ref ? ' (' + d.ref + ')' : '') + ' at ' + clock(d.time);
      return 'delivered' + (typeof d.queuedMs === 'number' ? ' after ' + d.queuedMs + ' ms' : '') + (d.moment ? ' at ' + d.moment + ' (' + clock(d.time) + ')' : ' at ' + clock(d.time));
    }
    if (i.status === 'dropped') return 'dropped: ' + ((i.dropped && i.dropped.reason) || 'no reason') + (i.dropped && i.dropped.decidedBy ? ' by ' + who(i.dropped.decidedBy) : '') + (i.dropped ? ' at ' + clock(i.dropped.time) : '');
    if (i.status === 'rejected') return 'rejected: ' + ((i.rejected && i.rejected.reason) || '') + (i.rejected && i.rejected.detail ? ' (' + i.rejected.detail + ')' : '');
    if (i.status === 'pending') return 'accepted' + (i.accepted ? ' at ' + clock(i.accepted.time) : '') + ', queued';
    return 'sent, no ack yet';
  }
  function sessionsOf() { return snap ? snap.sessions : []; }
  function current() { return sessionsOf().filter(function (s) { return s.session === selected; })[0]; }
  function select(id, focus) {
    selected = id;
    history.replaceState(null, '', '#session=' + encodeURIComponent(id));
    render();
    if (focus) { var b = document.querySelector('nav [data-session="' + CSS.escape(id) + '"]'); if (b) b.focus(); }
  }

  function sessionButton(s) {
    var steer = (s.accepts || []).some(function (t) { return /\\.control\\.(instruct|send_input)$/.test(t); });
    // D37: an ended session is not called live because its adapter still claims it; a silent one is stale.
    var live = s.state === 'ended' ? ''
      : s.claimants === 1 ? (s.stale ? ' · stale' : ' · live')
      : s.claimants > 1 ? ' · ' + s.claimants + ' claimants' : ' · adapter offline';
    return el('li', {}, [el('button', { type: 'button', 'data-session': s.session, 'aria-current': String(s.session === selected) }, [
      el('span', { class: 'sid' }, [s.session]),
      s.title || s.cwd ? el('span', { class: 'line muted' }, [[s.title, s.cwd].filter(Boolean).join(' · ')]) : null,
      el('span', { class: 'line' }, [
        el('span', { class: 'state', 'data-state': s.state }, [s.state]),
        (s.agent || '?') + live + (steer ? '' : ' · no steering verb'),
        s.queue.length ? ' · queue ' + s.queue.length : '',
        s.holds.length ? el('span', { class: 'badge', title: 'pending requests' }, [String(s.holds.length)]) : null,
      ]),
    ])]);
  }

  function fieldInput(h, f) {
    var id = String(f.id);
    var kept = (formDrafts[h.request] || {})[id];
    var attrs = { 'data-field-id': id, 'aria-label': f.label || id };
    var input;
    if (f.type === 'select' && Array.isArray(f.choices)) {
      if (f.multi) attrs.multiple = '';
      input = el('select', attrs, (f.multi || f.required ? [] : [el('option', { value: '' }, ['–'])]).concat(f.choices.map(function (c) {
        return el('option', { value: String(c.id) }, [c.label && c.label !== c.id ? c.label : String(c.id)]);
      })));
      if (kept !== undefined) Array.prototype.forEach.call(input.options, function (o) { o.selected = [].concat(kept).indexOf(o.value) >= 0; });
    } else if (f.type === 'boolean') {
      input = el('input', Object.assign(attrs, { type: 'checkbox' }));
      input.checked = kept === true;
    } else {
      input = el('input', Object.assign(attrs, { type: f.type === 'number' ? 'number' : 'text' }));
      if (kept !== undefined) input.value = String(kept);
    }
    return el('label', { class: 'row' }, [(f.label || id) + (f.required ? ' *' : ''), input]);
  }
  function formValues(box, h) {
    var values = {};
    (h.fields || []).forEach(function (f) {
      var input = box.querySelector('[data-field-id="' + CSS.escape(String(f.id)) + '"]');
      if (!input) return;
      var v;
      if (input.tagName === 'SELECT') v = f.multi ? Array.prototype.filter.call(input.options, function (o) { return o.selected; }).map(function (o) { return o.value; }) : input.value;
      else if (input.type === 'checkbox') v = input.checked;
      else if (input.type === 'number') v = input.value === '' ? '' : Number(input.value);
      else v = input.value;
      if (v === '' || (Array.isArray(v) && v.length === 0)) return;
      values[f.id] = v;
    });
    return values;
  }

  function decidedList(s) {
    var mine = (snap.decisions || []).filter(function (d) { return d.session === s.session; }).slice(-10).reverse();
    if (!mine.length) return null;
    return el('ul', { class: 'muted', 'data-field': 'decided' }, mine.map(function (d) {
      return el('li', { 'data-decided': d.request }, [d.request.slice(-8) + ' ' + d.outcome + (d.decidedBy ? ' by ' + who(d.decidedBy) : '') + (d.firstBy ? ', first allow by ' + who(d.firstBy) : '') + ' · ' + clock(d.time)]);
    }));
  }
  function requestBox(s, h) {
    var form = h.kind === 'form' && h.fields && h.fields.length;
    var answer = el('input', { type: 'text', 'aria-label': 'answer', placeholder: h.kind === 'permission' ? 'or deny with a message' : 'answer' });
    var note = el('div', { class: 'status', 'data-field': 'answer-status' }, []);
    function send(body) {
      body.session = s.session; body.request = h.request;
      note.textContent = 'sending…';
      post('respond', body).then(function (r) { note.textContent = r.message; note.setAttribute('data-status', r.error ? 'error' : 'delivered'); });
    }
    var buttons = [];
    var options = h.options || (h.kind === 'permission' ? ['allow', 'deny'] : []);
    options.forEach(function (o) {
      buttons.push(el('button', { type: 'button', class: 'act' + (o === 'deny' ? ' deny' : ''), 'data-answer': o }, [o === 'allow' ? 'Allow' : o === 'deny' ? 'Deny' : o]));
    });
    if (form) buttons.push(el('button', { type: 'button', class: 'act', 'data-answer': 'submit' }, ['Submit']), el('button', { type: 'button', class: 'act deny', 'data-answer': 'decline' }, ['Decline']));
    else buttons.push(answer, el('button', { type: 'button', class: 'act secondary', 'data-answer': 'text' }, ['Answer']));
    var box = el('div', { class: 'request', 'data-request': h.request }, [
      el('p', {}, [el('strong', {}, [h.kind]), ' · since ' + clock(h.since)]),
      el('p', {}, [h.prompt || '(no prompt at this capture level)']),
      riskyNote(h),
      form ? el('div', { 'data-field': 'form' }, h.fields.map(function (f) { return fieldInput(h, f); })) : null,
      el('div', { class: 'row' }, buttons),
      note,
    ]);
    // Form input survives redraws: every change is kept until the request goes away.
    box.addEventListener('change', function () { if (form) formDrafts[h.request] = formValues(box, h); });
    box.addEventListener('input', function () { if (form) formDrafts[h.request] = formValues(box, h); });
    box.addEventListener('click', function (ev) {
      var a = ev.target && ev.target.getAttribute && ev.target.getAttribute('data-answer');
      if (!a) return;
      if (a === 'text') { if (answer.value.trim()) send({ text: answer.value }); }
      else if (a === 'submit') send({ values: formValues(box, h) });
      else send({ option: a });
    });
    answer.addEventListener('keydown', function (ev) { if (ev.key === 'Enter' && answer.value.trim()) send({ text: answer.value }); });
    return box;
  }

  function instructBox(s) {
    var text = el('textarea', { id: 'instruct-text', 'aria-label': 'instruction', placeholder: 'Tell the agent what to do next. Ctrl+Enter sends.' });
    text.value = drafts[s.session] || '';
    text.addEventListener('input', function () { drafts[s.session] = text.value; });
    var steerable = (s.accepts || []).some(function (t) { return /\\.control\\.instruct$/.test(t); });
    var sendBtn = el('button', { type: 'button', class: 'act', id: 'instruct-send' }, ['Send instruction']);
    if (!steerable) sendBtn.setAttribute('disabled', '');
    // D43: an idle session a lane can start gets "Start now": the text becomes its turn's prompt.
    // Not while a turn runs: "idle" says only that nothing waits.
    var startBtn = steerable && s.startable && s.state === 'idle' && !s.running
      ? el('button', { type: 'button', class: 'act', id: 'instruct-start' }, ['Start now']) : null;
    var status = el('div', { class: 'status', id: 'instruct-status' }, []);
    var mine = (snap.instructions || []).filter(function (i) { return i.id === lastCommand[s.session]; })[0];
    if (mine) { status.textContent = lifecycle(mine); status.setAttribute('data-status', mine.status); status.setAttribute('data-command', mine.id); }
    else if (lastNote[s.session]) { status.textContent = lastNote[s.session].message; status.setAttribute('data-status', lastNote[s.session].error ? 'error' : 'pending'); }
    function send(start) {
      if (!text.value.trim() || sendBtn.disabled) return;
      var body = { session: s.session, text: text.value };
      if (start === true) body.idle = 'start';
      sendBtn.setAttribute('disabled', '');
      if (startBtn) startBtn.setAttribute('disabled', '');
      status.textContent = 'sending…'; status.removeAttribute('data-status');
      post('instruct', body).then(function (r) {
        lastNote[s.session] = r;
        if (r.command_id && !r.error) { lastCommand[s.session] = r.command_id; drafts[s.session] = ''; }
        render();
      });
    }
    sendBtn.addEventListener('click', function () { send(false); });
    if (startBtn) startBtn.addEventListener('click', function () { send(true); });
    text.addEventListener('keydown', function (ev) { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); send(); } });
    return el('div', {}, [
      el('h3', {}, ['Instruct']),
      steerable ? null : el('p', { class: 'muted' }, ['This session does not declare a steering verb (its adapter runs without AEP_INSTRUCT=1).']),
      text, el('div', { class: 'row' }, startBtn ? [sendBtn, ' ', startBtn] : [sendBtn]), status,
    ]);
  }

  // D32, D44: each waiting instruction can be withdrawn, edited in place, moved up or down and
  // promoted to a steer; the board redraws only from the stream, so a change shows once settled.
  // D46: who last edited, moved or promoted it, as the stream settled it.
  function changedBy(q) {
    var c = q.changedBy;
    return c && c.by ? ', ' + c.change + ' by ' + c.by.identity + ' (' + c.by.surface + (c.by.device ? ' ' + c.by.device : '') + ')' : '';
  }
  function queueItem(s, q, at) {
    function done(r) { queueNote[s.session] = r; render(); }
    function act(name, body) { return function () { post(name, Object.assign({ session: s.session, instruction: q.id }, body)).then(done); }; }
    function button(attr, label, title, fn, off) {
      var b = el('button', Object.assign({ type: 'button', title: title }, attr), [label]);
      b.disabled = !!off;
      b.addEventListener('click', fn);
      return b;
    }
    var label = q.id.slice(-8) + ' from ' + (q.sender || '?') + (q.delivery && q.delivery !== 'moment' ? ' (' + q.delivery + ')' : '') + (q.version > 1 ? ' v' + q.version : '') + changedBy(q);
    if (editing[q.id] !== undefined) {
      var area = el('textarea', { id: 'edit-' + q.id, 'data-edit-text': q.id, 'aria-label': 'new text', rows: '2' }, []);
      area.value = editing[q.id];
      area.addEventListener('input', function () { editing[q.id] = area.value; });
      return el('li', { 'data-instruction': q.id }, [label + ': ', area,
        el('div', { class: 'row' }, [
          button({ 'data-save': q.id }, 'Save', 'Replace the text, keeping its place', function () {
            post('edit', { session: s.session, instruction: q.id, text: area.value }).then(function (r) { if (!r.error) delete editing[q.id]; done(r); });
          }), ' ',
          button({ 'data-discard': q.id }, 'Cancel', 'Keep the text as it is', function () { delete editing[q.id]; render(); }),
        ])]);
    }
    return el('li', { 'data-instruction': q.id, 'data-version': String(q.version || 1) }, [
      label + (q.text ? ': ' + q.text : ''), ' ',
      button({ 'data-up': q.id }, '↑', 'Move up', act('move', at === 1 ? { to: 'front' } : { before: (s.queue[at - 1] || {}).id }), at === 0), ' ',
      button({ 'data-down': q.id }, '↓', 'Move down', act('move', at + 2 >= s.queue.length ? { to: 'back' } : { before: (s.queue[at + 2] || {}).id }), at === s.queue.length - 1), ' ',
      button({ 'data-edit': q.id }, 'Edit', 'Edit the text in place', function () { editing[q.id] = q.text || ''; render(); }), ' ',
      button({ 'data-promote': q.id }, 'Steer now', 'Deliver it into the running turn now', act('promote', {})), ' ',
      button({ 'data-withdraw': q.id }, 'Withdraw', 'Take it back', act('withdraw', {})),
    ]);
  }
  function holdButton(s) {
    var b = el('button', { type: 'button', id: 'queue-hold', 'data-paused': String(!!s.paused) }, [s.paused ? 'Resume queue' : 'Pause queue']);
    b.addEventListener('click', function () { post('hold', { session: s.session, paused: !s.paused }).then(function (r) { queueNote[s.session] = r; render(); }); });
    return el('div', { class: 'row' }, [b, s.paused ? el('span', { class: 'muted', 'data-field': 'paused' }, [' paused: nothing waiting is delivered']) : '']);
  }

  // D33: Stop only where a way in can stop the turn (the console process works it out from the
  // roster and the vendor's cancel row: s.stop). A session on the hook lane alone shows Stop
  // disabled with how to get a lane that can; one whose adapter takes no cancel says why, without it.
  function stopBox(s) {
    var offer = s.stop || { offered: (s.accepts || []).some(function (t) { return t === 'control.cancel'; }) };
    if (s.state === 'ended' || (!offer.offered && offer.code === 'session-ended')) return el('div', { 'data-field': 'stop' }, []);
    if (!offer.offered) {
      var why = el('p', { class: 'muted', id: 'stop-why', 'data-code': offer.code || 'unsupported' }, [offer.why || 'This session takes no cancel.']);
      if (offer.code !== 'lane-unreached') return el('div', { 'data-field': 'stop' }, [why]);
      var off = el('button', { type: 'button', class: 'act deny', id: 'stop', disabled: '', 'aria-describedby': 'stop-why' }, ['Stop the running turn']);
      return el('div', { 'data-field': 'stop' }, [el('div', { class: 'row' }, [off]), why]);
    }
    var stop = el('button', { type: 'button', class: 'act deny', id: 'stop' }, ['Stop the running turn']);
    var note = stopNote[s.session];
    var status = el('div', { class: 'status', id: 'stop-status' }, note ? [note.message] : []);
    if (note) status.setAttribute('data-status', note.pending ? 'pending' : note.error ? 'error' : 'delivered');
    if (note && note.pending) stop.setAttribute('disabled', '');
    stop.addEventListener('click', function () {
      stopNote[s.session] = { pending: true, message: 'stopping…' };
      render();
      post('cancel', { session: s.session }).then(function (r) { stopNote[s.session] = r; render(); });
    });
    return el('div', { 'data-field': 'stop' }, [el('div', { class: 'row' }, [stop]), status]);
  }

  function detail(s) {
    var box = document.getElementById('detail');
    if (!s) { box.replaceChildren(el('p', { class: 'muted' }, [sessionsOf().length ? 'Pick a session.' : 'No sessions on the relay yet.'])); return; }
    var focused = document.activeElement && document.activeElement.id;
    var typing = document.activeElement && /^(INPUT|SELECT)$/.test(document.activeElement.tagName) && document.activeElement.closest('[data-request]');
    if (typing && typing.isConnected && s.holds.some(function (h) { return h.request === typing.getAttribute('data-request'); })) return; // never redraw under someone typing an answer
    var audit = (snap.instructions || []).filter(function (i) { return i.session === s.session; });
    box.replaceChildren(
      el('h2', { 'data-field': 'title' }, [el('span', { class: 'sid' }, [s.session])]),
      el('div', { class: 'line' }, [el('span', { class: 'state', 'data-field': 'state', 'data-state': s.state }, [s.state]),
        (s.agent || 'unknown agent') + ' · last activity ' + clock(s.updatedAt) + ' · seq ' + (s.seq === undefined ? '–' : (s.epoch || 0) + ':' + s.seq)]),
      stopBox(s),
      el('h3', {}, ['Pending requests']),
      s.holds.length ? el('div', { 'data-field': 'requests' }, s.holds.map(function (h) { return requestBox(s, h); })) : el('p', { class: 'muted', 'data-field': 'requests' }, ['none']),
      instructBox(s),
      decidedList(s),
      el('h3', {}, ['Queue']),
      s.state === 'ended' ? '' : holdButton(s),
      s.queue.length ? el('ol', { class: 'queue', 'data-field': 'queue' }, s.queue.map(function (q, at) { return queueItem(s, q, at); })) : el('p', { class: 'muted', 'data-field': 'queue' }, ['empty']),
      el('div', { class: 'status', id: 'queue-status' }, queueNote[s.session] ? [queueNote[s.session].message] : []),
      el('h3', {}, ['Audit']),
      audit.length ? el('div', { class: 'table' }, [el('table', { 'data-field': 'audit' }, [
        el('thead', {}, [el('tr', {}, [el('th', {}, ['sent']), el('th', {}, ['from']), el('th', {}, ['text']), el('th', {}, ['outcome'])])]),
        el('tbody', {}, audit.map(function (i) {
          return el('tr', { 'data-instruction': i.id }, [el('td', { class: 'id' }, [clock(i.sentAt) || i.id.slice(-8)]), el('td', {}, [i.sender || '?']),
            el('td', {}, [i.text || '–']), el('td', { 'data-status': i.status }, [lifecycle(i)])]);
        })),
      ])]) : el('p', { class: 'muted' }, ['No instructions yet.'])
    );
    if (focused === 'instruct-text' || (focused && focused.indexOf('edit-') === 0 && document.getElementById(focused))) { var t = document.getElementById(focused); t.focus(); t.setSelectionRange(t.value.length, t.value.length); }
  }

  // Every pending request of every session, newest first: what a person away from the desk opens the page for.
  function waiting() {
    var all = [];
    sessionsOf().forEach(function (s) { s.holds.forEach(function (h) { all.push({ s: s, h: h }); }); });
    all.sort(function (a, b) { return a.h.since < b.h.since ? 1 : a.h.since > b.h.since ? -1 : 0; });
    document.querySelector('[data-field="waiting-title"]').textContent = 'Waiting for you: ' + (all.length ? all.length + ' request' + (all.length === 1 ? '' : 's') : 'none');
    var list = document.getElementById('waiting-list');
    list.replaceChildren.apply(list, all.map(function (w) {
      return el('li', {}, [el('button', { type: 'button', 'data-waiting': w.h.request, 'data-session': w.s.session }, [
        el('strong', {}, [(w.s.agent || '?') + ' · ' + w.h.kind]), ' since ' + clock(w.h.since) + ': ' + (w.h.prompt || '(no prompt at this capture level)'),
        el('span', { class: 'sid' }, [w.s.session]),
      ])]);
    }));
  }

  function render() {
    if (!snap) return;
    showRelay(snap);
    waiting();
    var list = document.getElementById('sessions');
    var hadFocus = document.activeElement && document.activeElement.getAttribute && document.activeElement.getAttribute('data-session');
    list.replaceChildren.apply(list, snap.sessions.length ? snap.sessions.map(sessionButton) : [el('li', { class: 'muted' }, ['no sessions yet'])]);
    if (hadFocus) { var b = list.querySelector('[data-session="' + CSS.escape(hadFocus) + '"]'); if (b) b.focus(); }
    detail(current());
    document.body.setAttribute('data-events', String(snap.events));
  }

  document.getElementById('waiting-list').addEventListener('click', function (ev) {
    var b = ev.target.closest && ev.target.closest('[data-waiting]');
    if (!b) return;
    select(b.getAttribute('data-session'), false);
    var box = document.querySelector('[data-request="' + CSS.escape(b.getAttribute('data-waiting')) + '"]');
    if (box) box.scrollIntoView({ block: 'center' });
  });
  document.getElementById('sessions').addEventListener('click', function (ev) {
    var b = ev.target.closest && ev.target.closest('[data-session]');
    if (b) select(b.getAttribute('data-session'), false);
  });
  document.addEventListener('keydown', function (ev) {
    var tag = (ev.target.tagName || '').toLowerCase();
    if (ev.key === 'Escape' && (tag === 'textarea' || tag === 'input')) { ev.target.blur(); return; }
    if (tag === 'textarea' || tag === 'input' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var list = sessionsOf();
    var at = list.findIndex(function (s) { return s.session === selected; });
    if (ev.key === 'j' || ev.key === 'k') {
      if (!list.length) return;
      var next = ev.key === 'j' ? Math.min(list.length - 1, at + 1) : Math.max(0, at < 0 ? 0 : at - 1);
      select(list[next].session, true);
      ev.preventDefault();
    } else if (ev.key === 'i') {
      var t = document.getElementById('instruct-text');
      if (t) { t.focus(); ev.preventDefault(); }
    }
  });

  followSnapshots(function (s) { snap = s; render(); }, 'console process');
})();
</script>
</body>
</html>
`;
