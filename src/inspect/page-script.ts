// Script shared by the inspect page and the console page: building nodes from untrusted stream
// fields as text only, showing the relay link state, and following the server's snapshots (SSE).
export const PAGE_SCRIPT_COMMON = `
  function el(tag, attrs, children) {
    var n = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { if (attrs[k] !== undefined && attrs[k] !== null) n.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) n.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return n;
  }
  function showRelay(snap) {
    var relay = document.getElementById('relay');
    relay.setAttribute('data-connected', String(snap.relay.connected));
    relay.textContent = (snap.relay.connected ? 'relay ' : 'relay unreachable ') + snap.relay.url + (snap.relay.error ? ' (' + snap.relay.error + ')' : '');
  }
  function followSnapshots(onSnapshot, serverName) {
    var source = new EventSource('events');
    source.addEventListener('snapshot', function (m) { onSnapshot(JSON.parse(m.data)); });
    source.onerror = function () {
      var relay = document.getElementById('relay');
      relay.setAttribute('data-connected', 'false');
      relay.textContent = serverName + ' unreachable, retrying…';
    };
  }
`;
