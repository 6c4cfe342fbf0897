// The inspect page: one static document that follows /events (SSE snapshots) and redraws.
// Everything from the stream is inserted as text, never as markup: event fields are untrusted.
import { PAGE_SCRIPT_COMMON } from './page-script.js';
import { RELAY_MARKS, headerStart, pageHead } from './page-head.js';

export const PAGE_HTML = `${pageHead('aep-steer inspect')}
<style>
  :root { font-family: system-ui, sans-serif; color: #1d232a; background: #f5f6f8; }
  body { margin: 0; padding: 16px 24px; }
  header { display: flex; align-items: baseline; gap: 16px; }
  h1 { font-size: 20px; margin: 0 0 12px; }
  h2 { font-size: 15px; margin: 20px 0 8px; color: #4a5360; }
  .relay { font-size: 13px; color: #4a5360; }
${RELAY_MARKS}
  .sessions { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 12px; }
  .session { background: #fff; border: 1px solid #d8dce2; border-radius: 8px; padding: 12px 14px; }
  .session h3 { margin: 0 0 6px; font-size: 14px; font-family: ui-monospace, monospace; word-break: break-all; }
  .meta { font-size: 12px; color: #4a5360; margin-bottom: 8px; }
  .state { display: inline-block; padding: 2px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
  .state[data-state="idle"] { background: #e3e7ec; }
  .state[data-state="queued"] { background: #ffe7a8; }
  .state[data-state^="holding"] { background: #ffd0c2; }
  .state[data-state="ended"] { background: #cfd5dc; color: #59626d; }
  ol.queue { margin: 6px 0 0; padding-left: 20px; font-size: 13px; }
  ol.queue li { margin: 2px 0; }
  .muted { color: #8a929c; font-size: 12px; }
  table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
  th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #e6e9ed; }
  td.id { font-family: ui-monospace, monospace; font-size: 12px; }
  td[data-status="delivered"] { color: #1e7a3c; }
  td[data-status="dropped"], td[data-status="rejected"] { color: #b02a20; }
  td[data-status="pending"], td[data-status="unacknowledged"] { color: #93650a; }
  ul.recent { list-style: none; margin: 0; padding: 0; font-family: ui-monospace, monospace; font-size: 12px; }
  ul.recent li { padding: 2px 0; }
</style>
</head>
<body>
${headerStart('aep-steer inspect')}
  <span class="muted" id="count"></span>
</header>
<h2>Sessions</h2>
<div class="sessions" id="sessions"><p class="muted">no sessions yet</p></div>
<h2>Instructions</h2>
<table><thead><tr><th>command</th><th>session</th><th>sender</th><th>status</th></tr></thead><tbody id="instructions"></tbody></table>
<h2>Recent events</h2>
<ul class="recent" id="recent"></ul>
<script>
(function () {
  'use strict';
${PAGE_SCRIPT_COMMON}  function outcome(i) {
    if (i.status === 'delivered') return 'delivered' + (i.delivered && typeof i.delivered.queuedMs === 'number' ? ' after ' + i.delivered.queuedMs + ' ms' : '');
    if (i.status === 'dropped') return 'dropped (' + ((i.dropped && i.dropped.reason) || 'no reason') + ')';
    if (i.status === 'rejected') return 'rejected ' + ((i.rejected && i.rejected.reason) || '') + (i.rejected && i.rejected.detail ? ': ' + i.rejected.detail : '');
    if (i.status === 'pending') return 'accepted, queued';
    return 'sent, no ack yet';
  }
  function session(s) {
    var steer = (s.accepts || []).filter(function (t) { return /\\.control\\.instruct$/.test(t); });
    var meta = [s.agent || 'unknown agent', s.claimants === 1 ? 'live' : s.claimants > 1 ? s.claimants + ' claimants (ambiguous)' : 'not live',
      steer.length ? 'accepts instruct' : 'no instruct verb', 'seq ' + (s.seq === undefined ? '–' : (s.epoch || 0) + ':' + s.seq)];
    var queue = s.queue.length
      ? el('ol', { class: 'queue', 'data-field': 'queue' }, s.queue.map(function (q) {
          return el('li', { 'data-instruction': q.id }, [q.id.slice(-8) + ' from ' + (q.sender || '?') + (q.text ? ': ' + q.text : '')]);
        }))
      : el('div', { class: 'muted', 'data-field': 'queue' }, ['queue empty']);
    var holds = s.holds.map(function (h) { return el('div', { class: 'muted', 'data-field': 'hold' }, ['holding ' + h.kind + (h.prompt ? ': ' + h.prompt : '')]); });
    return el('div', { class: 'session', 'data-session': s.session }, [
      el('h3', {}, [s.session]),
      el('div', { class: 'meta' }, [el('span', { class: 'state', 'data-field': 'state', 'data-state': s.state }, [s.state]), ' ', meta.join(' · ')]),
      queue,
    ].concat(holds));
  }
  function render(snap) {
    showRelay(snap);
    document.getElementById('count').textContent = snap.events + ' events';
    var box = document.getElementById('sessions');
    box.replaceChildren.apply(box, snap.sessions.length ? snap.sessions.map(session) : [el('p', { class: 'muted' }, ['no sessions yet'])]);
    var body = document.getElementById('instructions');
    body.replaceChildren.apply(body, snap.instructions.map(function (i) {
      return el('tr', { 'data-instruction': i.id }, [el('td', { class: 'id' }, [i.id]), el('td', { class: 'id' }, [i.session]),
        el('td', {}, [i.sender || '?']), el('td', { 'data-status': i.status }, [outcome(i)])]);
    }));
    var recent = document.getElementById('recent');
    recent.replaceChildren.apply(recent, snap.recent.map(function (e) {
      return el('li', {}, [e.time.slice(11, 23) + '  ' + e.type + (e.session ? '  ' + e.session : '') + (e.cause ? '  ← ' + e.cause.slice(-8) : '')]);
    }));
    document.body.setAttribute('data-events', String(snap.events));
  }
  followSnapshots(render, 'inspect server');
})();
</script>
</body>
</html>
`;
