// What a paired phone loads under /device/: the console page with a "Notify this device" bar,
// and the service worker. The worker caches nothing (no fetch handler, no Cache Storage): the
// board and every instruction's text come live from the console or not at all. A push it is
// woken by carries only "something waits" and the console path to open; the notification says
// no more than that, and a tap opens the path on the console's own origin.
import { CONSOLE_HTML } from './page.js';
import { pagePolicy } from '../inspect/page-policy.js';

const DEVICE_BAR = `<section id="device-bar" aria-label="This device">
<style>
  #device-bar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 8px 16px; background: #fff; border-bottom: 1px solid #d8dce2; font-size: 14px; }
  #device-bar button { font: inherit; padding: 8px 14px; min-height: 44px; border-radius: 8px; border: 1px solid #2f6fdb; background: #fff; color: #2f6fdb; }
</style>
<button type="button" id="push-on" disabled>Notify this device</button>
<span id="push-state" data-field="push-state">Notifications are off on this device.</span>
</section>
<script>
(function () {
  var button = document.getElementById('push-on');
  var state = document.getElementById('push-state');
  var root = document.documentElement;
  function say(text, mark) { state.textContent = text; if (mark) root.setAttribute('data-push', mark); }
  function keyBytes(b64) {
    var s = atob(b64.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (b64.length % 4)) % 4));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  if (!('serviceWorker' in navigator)) { say('This browser has no service workers: no notifications here.', 'unsupported'); return; }
  navigator.serviceWorker.register('sw.js').then(function (reg) {
    root.setAttribute('data-sw', 'registered');
    if (!('PushManager' in window)) { say('This browser has no Web Push: add the page to the home screen first (iOS).', 'unsupported'); return; }
    button.disabled = false;
    button.addEventListener('click', function () {
      button.disabled = true;
      Notification.requestPermission().then(function (p) {
        if (p !== 'granted') throw new Error('notifications were not allowed');
        return fetch('push-key').then(function (r) { return r.json(); });
      }).then(function (k) {
        return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(k.key) });
      }).then(function (sub) {
        return fetch('api/subscribe', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sub.toJSON()) });
      }).then(function (r) {
        if (!r.ok) throw new Error('the console refused the subscription (' + r.status + ')');
        say('This device is told when something waits (the push says nothing more).', 'on');
      }).catch(function (err) {
        button.disabled = false;
        say('Notifications not turned on: ' + err.message, 'failed');
      });
    });
  }, function (err) { say('The service worker did not register: ' + err.message, 'failed'); });
})();
</script>
`;

/** The device page: the console's own page with the device bar first in the body. */
export const DEVICE_HTML = CONSOLE_HTML.replace('<body>', `<body>\n${DEVICE_BAR}`);
/** The page's policy plus its own origin for the service worker. */
export const DEVICE_POLICY = `${pagePolicy(DEVICE_HTML)}; worker-src 'self'`;

export const SERVICE_WORKER = `// aep-steer console: push notices only. Nothing is cached.
self.addEventListener('install', function () { self.skipWaiting(); });
self.addEventListener('activate', function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener('push', function (e) {
  var d = {};
  try { d = e.data ? e.data.json() : {}; } catch (x) { d = {}; }
  e.waitUntil(self.registration.showNotification('aep-steer', {
    body: 'Something waits for you. Tap to open the console.',
    tag: 'aep-steer-waiting',
    data: { path: typeof d.path === 'string' ? d.path : './' }
  }));
});
self.addEventListener('notificationclick', function (e) {
  e.notification.close();
  var url = new URL(e.notification.data && e.notification.data.path || './', self.registration.scope);
  if (url.origin !== self.location.origin) url = new URL('./', self.registration.scope);
  e.waitUntil(self.clients.openWindow(url.href));
});
`;
